"""The query encoder alone: CPU and wall time per single short query, and agreement with the fp32 graph, for the
exported all-MiniLM-L6-v2 (fp32, as the service runs it) against cheaper graphs of the same model.

    .venv/bin/python -m benchmarks.query_encoder                      # every candidate, LoCoMo dev questions
    .venv/bin/python -m benchmarks.query_encoder --candidates fp32 int8 --passes 7

Candidates are built into --models-dir (default: a temporary directory) from the fp32 file that
core.embeddings.onnx_export writes (never modified): dynamic int8 quantisation (onnxruntime.quantization,
QInt8 / QUInt8 weights, per tensor or per channel, before or after ONNX Runtime's fusions, the feed-forward output
left in fp32), weight-only blockwise 8-bit quantisation (MatMulNBits; block 128 is the served query graph, made by
core.embeddings.onnx_export.onnx_model_quantise), graph optimisation levels, an optimised graph saved and loaded
with optimisation off, two intra-op threads. Each query is tokenised as the service does (no padding: the query's
own tokens only) and run alone, batch of one, as a web process embeds a search query.

Timing: per pass, every candidate embeds every dev question once (candidates interleaved per question, so load
drift hits all alike); the figure is the median over passes of the per-pass median per query, with the ratio to
fp32 from the same pass. CPU is the process's CPU time (all threads), wall the elapsed time.

Quality, per candidate against fp32: cosine of the vectors over the dev questions and the dev turns and
observations (min / p1 / median), and recall@k of an exact cosine scan over each dev conversation's turns and
observations with the candidate's query vectors against fp32 stored vectors (the deployment case: stored vectors
are not re-embedded) and with both swapped. The product's own recall through the API is
benchmarks/locomo_retrieval.py (EMBEDDING_QUERY_ONNX_VARIANT chooses the query graph).
Also the CPU per query when concurrent queries are embedded as one batch (2, 4, 8). Reads LoCoMo from
../shared/benchmarks (--locomo; dev split, conv-26 and conv-30). Writes benchmarks/results/query_encoder.json."""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.lib.locomo_data import DEFAULT_LOCOMO, KS, SPLITS, load_conversations, recall_table
from core.embeddings.onnx_export import (
    default_onnx_path,
    model_directory,
    model_max_tokens,
    onnx_model_ensure,
    onnx_model_quantise,
)

REPO_DIR = Path(__file__).resolve().parent.parent


def candidate_files(*, fp32: Path, directory: Path) -> dict[str, dict]:
    """name -> {"path", "level", "threads"}; quantised files are written once into `directory`."""
    import onnx
    import onnxruntime
    from onnxruntime.quantization import QuantType, matmul_nbits_quantizer, quantize_dynamic
    from onnxruntime.quantization.shape_inference import quant_pre_process

    directory.mkdir(parents=True, exist_ok=True)
    all_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    candidates = {
        "fp32": {"path": fp32, "level": all_level, "threads": 1},
        "fp32-basic": {"path": fp32, "level": onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC, "threads": 1},
        "fp32-2threads": {"path": fp32, "level": all_level, "threads": 2},
    }
    saved = directory / "fp32-optimised.onnx"
    if not saved.exists():
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = all_level
        options.optimized_model_filepath = str(saved)
        onnxruntime.InferenceSession(str(fp32), options, providers=["CPUExecutionProvider"])
    candidates["fp32-saved-optimised"] = {
        "path": saved,
        "level": onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL,
        "threads": 1,
    }
    preprocessed = directory / "fp32-preprocessed.onnx"
    if not preprocessed.exists():
        quant_pre_process(str(fp32), str(preprocessed), skip_symbolic_shape=True)
    for name, weight_type, per_channel in (
        ("int8", QuantType.QInt8, False),
        ("int8-per-channel", QuantType.QInt8, True),
        ("uint8", QuantType.QUInt8, False),
        ("uint8-per-channel", QuantType.QUInt8, True),
    ):
        target = directory / f"{name}.onnx"
        if not target.exists():
            quantize_dynamic(
                str(preprocessed),
                str(target),
                weight_type=weight_type,
                per_channel=per_channel,
                op_types_to_quantize=["MatMul"],
            )
        candidates[name] = {"path": target, "level": all_level, "threads": 1}
    candidates["int8-2threads"] = {**candidates["int8"], "threads": 2}
    # Quantising the graph after ONNX Runtime's fusions (Attention, LayerNormalization, Gelu as single nodes), so
    # the attention projections become one quantised QAttention node.
    fused = directory / "fp32-fused.onnx"
    if not fused.exists():
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        options.optimized_model_filepath = str(fused)
        onnxruntime.InferenceSession(str(fp32), options, providers=["CPUExecutionProvider"])
    for name, per_channel in (("int8-fused", False), ("int8-fused-per-channel", True)):
        target = directory / f"{name}.onnx"
        if not target.exists():
            quantize_dynamic(
                str(fused),
                str(target),
                weight_type=QuantType.QInt8,
                per_channel=per_channel,
                extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
            )
        candidates[name] = {"path": target, "level": all_level, "threads": 1}
    # The feed-forward output projections (after GELU: the widest activation ranges) left in fp32.
    target = directory / "int8-per-channel-ffn-out-fp32.onnx"
    if not target.exists():
        graph = onnx.load(str(preprocessed)).graph
        excluded = [n.name for n in graph.node if n.op_type == "MatMul" and n.name.endswith("/output/dense/MatMul")]
        excluded = [n for n in excluded if "attention" not in n]
        quantize_dynamic(
            str(preprocessed),
            str(target),
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
            nodes_to_exclude=excluded,
        )
    candidates["int8-per-channel-ffn-out-fp32"] = {"path": target, "level": all_level, "threads": 1}
    # Weight-only blockwise quantisation (MatMulNBits, 8-bit, int8 compute): the served query graph is block 128,
    # made by the export's own function; block 64 for comparison.
    target = directory / "int8-blockwise-64.onnx"
    if not target.exists():
        logging.getLogger(matmul_nbits_quantizer.__name__).setLevel(logging.WARNING)
        quantiser = matmul_nbits_quantizer.MatMulNBitsQuantizer(
            onnx.load(str(preprocessed)), bits=8, block_size=64, is_symmetric=True, accuracy_level=4
        )
        quantiser.process()
        quantiser.model.save_model_to_file(str(target), use_external_data_format=False)
    candidates["int8-blockwise-64"] = {"path": target, "level": all_level, "threads": 1}
    target = directory / "int8-blockwise-128.onnx"
    if not target.exists():
        onnx_model_quantise(source=fp32, target=target)
    candidates["int8-blockwise-128 (served)"] = {"path": target, "level": all_level, "threads": 1}
    candidates["int8-blockwise-128-2threads"] = {"path": target, "level": all_level, "threads": 2}
    return candidates


def session_open(spec: dict):
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = spec["level"]
    options.inter_op_num_threads = 1
    options.intra_op_num_threads = spec["threads"]
    # Idle pool threads would otherwise spin after each run and bill their CPU to the next candidate's query.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(str(spec["path"]), options, providers=["CPUExecutionProvider"])


def tokenizers_open():
    from tokenizers import Tokenizer

    model_dir = model_directory()
    single = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    single.enable_truncation(max_length=model_max_tokens(model_dir))
    single.no_padding()
    batch = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    batch.enable_truncation(max_length=model_max_tokens(model_dir))
    batch.enable_padding()
    return single, batch


def run(session, encodings) -> np.ndarray:
    ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
    mask = np.asarray([e.attention_mask for e in encodings], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    return session.run(None, feeds)[0].astype(np.float32, copy=False)


def embed_all(session, batch_tokenizer, texts: list[str], batch_size: int = 32) -> np.ndarray:
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.zeros((len(texts), 384), dtype=np.float32)
    for start in range(0, len(order), batch_size):
        indices = order[start : start + batch_size]
        out[indices] = run(session, batch_tokenizer.encode_batch([texts[i] for i in indices]))
    return out


def timing(sessions: dict, single, questions: list[str], passes: int) -> dict:
    per_pass: dict[str, list[tuple[float, float]]] = {name: [] for name in sessions}
    for _ in range(passes):
        samples: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in sessions}
        for question in questions:
            for name, session in sessions.items():
                cpu0, wall0 = time.process_time(), time.perf_counter()
                run(session, [single.encode(question)])
                samples[name][0].append(time.process_time() - cpu0)
                samples[name][1].append(time.perf_counter() - wall0)
        for name, (cpu, wall) in samples.items():
            per_pass[name].append((statistics.median(cpu) * 1000, statistics.median(wall) * 1000))
    result = {}
    for name, values in per_pass.items():
        ratios_cpu = [c / per_pass["fp32"][i][0] for i, (c, _) in enumerate(values)]
        ratios_wall = [w / per_pass["fp32"][i][1] for i, (_, w) in enumerate(values)]
        result[name] = {
            "cpu_ms": round(statistics.median(c for c, _ in values), 3),
            "wall_ms": round(statistics.median(w for _, w in values), 3),
            "cpu_ratio": round(statistics.median(ratios_cpu), 3),
            "wall_ratio": round(statistics.median(ratios_wall), 3),
        }
    return result


def batching(sessions: dict, batch_tokenizer, questions: list[str], passes: int, sizes=(1, 2, 4, 8)) -> dict:
    """CPU per query when concurrent queries are embedded together: batches of `size` dev questions in their order
    (as they would arrive), padded to the batch's longest. Medians over passes of the per-pass CPU per query."""
    result = {}
    for name in ("fp32", "int8-blockwise-128 (served)"):
        if name not in sessions:
            continue
        per_size = {}
        for size in sizes:
            figures = []
            for _ in range(passes):
                cpu0 = time.process_time()
                for start in range(0, len(questions) - size + 1, size):
                    run(sessions[name], batch_tokenizer.encode_batch(questions[start : start + size]))
                figures.append((time.process_time() - cpu0) * 1000 / (len(questions) // size * size))
            per_size[size] = round(statistics.median(figures), 3)
        result[name] = per_size
    return result


def cosine_summary(a: np.ndarray, b: np.ndarray) -> dict:
    cos = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return {
        "min": round(float(cos.min()), 5),
        "p1": round(float(np.percentile(cos, 1)), 5),
        "median": round(float(np.median(cos)), 5),
    }


def exact_recall(conversations, query_vectors: dict, stored_vectors: dict) -> dict:
    """recall@k per corpus of an exact cosine scan, over both dev conversations."""
    tables = {}
    for corpus in ("turns", "observations"):
        ranked = []
        for conversation in conversations:
            sources = conversation.corpora()[corpus]["sources"]
            stored = stored_vectors[(conversation.sample_id, corpus)]
            queries = query_vectors[conversation.sample_id]
            scores = queries @ stored.T
            for question, row in zip(conversation.questions, scores, strict=True):
                top = np.argsort(-row, kind="stable")[: max(KS)]
                ranked.append((question, [sources[i] for i in top]))
        tables[corpus] = recall_table(ranked)
    return tables


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    parser.add_argument("--models-dir", type=Path, default=None, help="where candidates are built (default: temp)")
    parser.add_argument("--candidates", nargs="*", default=None, help="default: all")
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--output", type=Path, default=REPO_DIR / "benchmarks" / "results" / "query_encoder.json")
    arguments = parser.parse_args()

    fp32 = onnx_model_ensure(target=default_onnx_path(directory=REPO_DIR / ".data" / "models"))
    with tempfile.TemporaryDirectory() as temporary:
        directory = arguments.models_dir or Path(temporary)
        candidates = candidate_files(fp32=fp32, directory=directory)
        if arguments.candidates:
            candidates = {name: candidates[name] for name in ["fp32", *arguments.candidates] if name in candidates}
        sessions = {name: session_open(spec) for name, spec in candidates.items()}
        single, batch = tokenizers_open()
        conversations = load_conversations(arguments.locomo, sample_ids=SPLITS["dev"])
        questions = [q.text for c in conversations for q in c.questions]
        load_start = os.getloadavg()
        for session in sessions.values():  # warm-up
            for question in questions[:20]:
                run(session, [single.encode(question)])
        times = timing(sessions, single, questions, arguments.passes)
        batched = batching(sessions, batch, questions, arguments.passes)
        load_end = os.getloadavg()

        texts_by_corpus = {
            (c.sample_id, corpus): c.corpora()[corpus]["texts"]["raw"]
            for c in conversations
            for corpus in ("turns", "observations")
        }
        vectors: dict[str, dict] = {}
        for name, session in sessions.items():
            if name != "fp32" and any(candidates[name]["path"] == candidates[other]["path"] for other in list(vectors)):
                continue  # the same graph as one already measured: the same vectors
            queries = {
                c.sample_id: np.stack([run(session, [single.encode(q.text)])[0] for q in c.questions])
                for c in conversations
            }
            stored = {key: embed_all(session, batch, texts) for key, texts in texts_by_corpus.items()}
            vectors[name] = {"queries": queries, "stored": stored}

    base = vectors["fp32"]
    report = {
        "questions": len(questions),
        "passes": arguments.passes,
        "load_average_start": [round(v, 2) for v in load_start],
        "load_average_end": [round(v, 2) for v in load_end],
        "cores": os.cpu_count(),
        "candidates": {},
        "batching_cpu_ms_per_query": batched,
    }
    base_recall = exact_recall(conversations, base["queries"], base["stored"])
    report["fp32_exact_recall"] = base_recall
    for name in candidates:
        entry = {"timing": times[name], "file_mb": round(candidates[name]["path"].stat().st_size / 1e6, 1)}
        if name in vectors and name != "fp32":
            v = vectors[name]
            all_q = np.concatenate([v["queries"][c.sample_id] for c in conversations])
            all_q_base = np.concatenate([base["queries"][c.sample_id] for c in conversations])
            docs = np.concatenate(list(v["stored"].values()))
            docs_base = np.concatenate(list(base["stored"].values()))
            entry["cosine_questions"] = cosine_summary(all_q, all_q_base)
            entry["cosine_documents"] = cosine_summary(docs, docs_base)
            for label, stored in (("query_only", base["stored"]), ("both", v["stored"])):
                recall = exact_recall(conversations, v["queries"], stored)
                entry[f"recall_{label}"] = recall
                entry[f"recall_{label}_overall_max_delta"] = max(
                    abs(recall[corpus]["overall"][k] - base_recall[corpus]["overall"][k])
                    for corpus in recall
                    for k in KS
                )
                entry[f"recall_{label}_max_delta"] = max(
                    abs(recall[corpus][group][k] - base_recall[corpus][group][k])
                    for corpus in recall
                    for group in recall[corpus]
                    if group != "questions"
                    for k in KS
                )
        report["candidates"][name] = entry

    arguments.output.parent.mkdir(parents=True, exist_ok=True)
    arguments.output.write_text(json.dumps(report, indent=2, default=str) + "\n")
    loads = " -> ".join(", ".join(f"{value:.2f}" for value in load) for load in (load_start, load_end))
    print(f"{len(questions)} dev questions, {arguments.passes} passes; load average {loads}, {os.cpu_count()} cores")
    print(
        f"{'candidate':30} {'MB':>6} {'cpu ms':>7} {'x fp32':>7} {'wall ms':>8} {'x fp32':>7}"
        "  cos q min/p1/med        cos docs min/p1/med     Δrecall overall q-only/both  any cell"
    )
    for name, entry in report["candidates"].items():
        t = entry["timing"]
        line = f"{name:30} {entry['file_mb']:6.1f} {t['cpu_ms']:7.3f} {t['cpu_ratio']:7.3f}"
        line += f" {t['wall_ms']:8.3f} {t['wall_ratio']:7.3f}"
        if "cosine_questions" in entry:
            q, d = entry["cosine_questions"], entry["cosine_documents"]
            line += f"  {q['min']:.4f}/{q['p1']:.4f}/{q['median']:.4f}  {d['min']:.4f}/{d['p1']:.4f}/{d['median']:.4f}"
            line += (
                f"  {entry['recall_query_only_overall_max_delta']:.2f} / {entry['recall_both_overall_max_delta']:.2f}"
            )
            line += f"  {entry['recall_query_only_max_delta']:.2f} / {entry['recall_both_max_delta']:.2f}"
        print(line)
    for name, per_size in batched.items():
        sizes = ", ".join(f"batch {size}: {ms:.3f}" for size, ms in per_size.items())
        print(f"{name}: CPU ms per query when batched ({sizes})")
    print(f"results: {arguments.output}")


if __name__ == "__main__":
    main()
