"""LoCoMo retrieval through the product: recall@5/10/25/50 for turns and observations, per mode and category.

    .venv/bin/python -m benchmarks.locomo_retrieval --split dev            # conv-26, conv-30 (tuning split)
    .venv/bin/python -m benchmarks.locomo_retrieval --split eval --repeats 3
    .venv/bin/python -m benchmarks.locomo_retrieval --split dev --quick    # the `make bench` version

On a throwaway stack (benchmarks/lib/stack.py): the chosen conversations are imported with
`import_memories --format locomo` (each conversation its own agent; turns as messages with their session dates,
observations as facts with their dia_id provenance), one API key per agent, the web app under gunicorn on
127.0.0.1, then every question goes through the public HTTP API with the Python client:
`POST /api/v1/messages/search` for the turns corpus and `POST /api/v1/memory/search` for the observations corpus,
in each mode (semantic, text, hybrid), top 50. A retrieved item's sources are the dia ids it came from (a message's
own `dia_id`, a fact's `dia_ids`). Recall is the paper's (benchmarks/lib/locomo_data.py). Repeats re-run the queries
(retrieval is deterministic; repeats give the latency medians and show the figures are stable).
`--graph-study 0:2,0.5:2,...` then runs turns/hybrid and observations/hybrid again for each
MEMORY_GRAPH_WEIGHT:MEMORY_GRAPH_HOPS pair, each on a web app of its own over the same data. Imported observations
join the entity graph as any imported fact does: the import parses them with the offline extractor
(facts.services.graph_extraction), and their relations link the turns the observations cite (their dia ids), which
is what the graph signal of turn search ranks: on this benchmark the turns' graph is the one formed from the
dataset's observations, as a deployment's is formed from its conversations.
Writes benchmarks/results/locomo_<split>.json."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks.lib.client import MemoryClient
from benchmarks.lib.locomo_data import (
    DEFAULT_LOCOMO,
    KS,
    PAPER,
    PAPER_CATEGORY_AT_10,
    SPLITS,
    load_conversations,
    recall_table,
)
from benchmarks.lib.stack import RESULTS_DIR, machine, percentile, throwaway_stack

MODES = ("semantic", "text", "hybrid")
CORPORA = ("turns", "observations")
AGENT_PREFIX = "locomo"


def import_split(stack, *, locomo: Path, sample_ids: list[str]) -> dict[str, dict]:
    """import_memories of just these conversations (a subset file in the throwaway data folder, never in the repo).
    Returns, per sample id, the agent's API key and the speaker who owns the sessions."""
    samples = [s for s in json.loads(locomo.read_text(encoding="utf-8")) if s["sample_id"] in sample_ids]
    subset = Path(tempfile.mkstemp(suffix=".json", dir=stack.data_dir)[1])
    subset.write_text(json.dumps(samples), encoding="utf-8")
    started = time.monotonic()
    report = stack.manage("import_memories", str(subset), "--format", "locomo", "--agent", AGENT_PREFIX)
    print(f"import_memories: {time.monotonic() - started:.1f}s\n{report}")
    return {
        sample["sample_id"]: {
            "key": stack.api_key(f"{AGENT_PREFIX}-{sample['sample_id']}"),
            "owner": sample["conversation"]["speaker_a"],
        }
        for sample in samples
    }


def embed_messages(stack) -> float:
    """import_memories queues message embedding for the workers: run one until every message has its vector."""
    os.environ.update(stack.env)
    import django

    django.setup()
    from conversations.models import Message, MessageEmbedding

    started = time.monotonic()
    stack.start_worker()
    total = Message.objects.count()
    while MessageEmbedding.objects.count() < total:
        if time.monotonic() - started > 1800:
            raise TimeoutError("message embedding did not finish")
        time.sleep(1)
    return time.monotonic() - started


def retrieve(client: MemoryClient, *, corpus: str, query: str, user: str, mode: str, top_k: int) -> list[tuple]:
    if corpus == "turns":
        hits = client.messages_search(query=query, user=user, top_k=top_k, mode=mode)["results"]
        return [(hit["message"]["metadata"].get("dia_id"),) for hit in hits]
    hits = client.search(query=query, user=user, top_k=top_k, mode=mode)["results"]
    return [tuple(hit["fact"]["metadata"].get("dia_ids") or ()) for hit in hits]


def run_once(conversations, agents, base_url: str, *, modes, corpora, workers: int) -> tuple[dict, dict]:
    """Every question in every (corpus, mode); `workers` clients at once (1: one request at a time)."""
    tables, latencies = {}, {}
    jobs = [(conversation, question) for conversation in conversations for question in conversation.questions]
    for corpus in corpora:
        for mode in modes:

            def ask(job, corpus=corpus, mode=mode):
                conversation, question = job
                agent = agents[conversation.sample_id]
                started = time.perf_counter()
                sources = retrieve(
                    MemoryClient(base_url, agent["key"], timeout=300),
                    corpus=corpus,
                    query=question.text,
                    user=agent["owner"],
                    mode=mode,
                    top_k=max(KS),
                )
                return question, sources, time.perf_counter() - started

            with ThreadPoolExecutor(workers) as pool:
                answers = list(pool.map(ask, jobs))
            seconds = [elapsed for _, _, elapsed in answers]
            tables[f"{corpus}/{mode}"] = recall_table([(question, sources) for question, sources, _ in answers])
            latencies[f"{corpus}/{mode}"] = {
                "p50_ms": round(1000 * percentile(seconds, 50), 2),
                "p95_ms": round(1000 * percentile(seconds, 95), 2),
            }
    return tables, latencies


def graph_study(stack, conversations, agents, *, pairs: list[str], workers: int) -> dict:
    """turns/hybrid and observations/hybrid recall per (graph weight, hops), each through a web app started with
    those settings."""
    study = {}
    for pair in pairs:
        weight, hops = pair.split(":")
        base_url = stack.start_web(
            name=f"web-graph-{pair}", settings_env={"MEMORY_GRAPH_WEIGHT": weight, "MEMORY_GRAPH_HOPS": hops}
        )
        tables, latencies = run_once(
            conversations, agents, base_url, modes=("hybrid",), corpora=CORPORA, workers=workers
        )
        study[pair] = {
            corpus: {"recall": tables[f"{corpus}/hybrid"], "latency_http_ms": latencies[f"{corpus}/hybrid"]}
            for corpus in CORPORA
        }
    return study


def print_graph_study(study: dict) -> None:
    categories = ["single-hop", "multi-hop", "temporal", "open-domain", "adversarial"]
    for corpus in CORPORA:
        print(f"\n{corpus}/hybrid recall@10 per MEMORY_GRAPH_WEIGHT:MEMORY_GRAPH_HOPS")
        print(f"{'weight:hops':24} " + " ".join(f"{c:>12}" for c in [*categories, "overall", "p50 ms"]))
        for pair, cells in study.items():
            table = cells[corpus]["recall"]
            print(
                f"{pair:24} "
                + " ".join(f"{table.get(c, {}).get(10, float('nan')):12.1f}" for c in [*categories, "overall"])
                + f" {cells[corpus]['latency_http_ms']['p50_ms']:12.1f}"
            )


def run_mem0(stack, conversations, *, repeats: int) -> dict:
    """The same observations in mem0 (infer=False, same model, pgvector on the same server), the same questions
    through its full search, in-process; one mem0 user per conversation."""
    from benchmarks.lib.mem0_store import Mem0Store

    work_dir = stack.data_dir / "mem0"
    work_dir.mkdir()
    store = Mem0Store(database_url=stack.env["DATABASE_URL"], work_dir=work_dir, collection="mem0_locomo")
    started = time.monotonic()
    for conversation in conversations:
        for text, _, dia_ids, _ in conversation.observations:
            store.add(text=text, user_id=conversation.sample_id, dia_ids=dia_ids)
    add_seconds = time.monotonic() - started
    runs, latency_runs = [], []
    for _ in range(repeats):
        ranked, seconds = [], []
        for conversation in conversations:
            for question in conversation.questions:
                sources, elapsed = store.search(query=question.text, user_id=conversation.sample_id, top_k=max(KS))
                ranked.append((question, sources))
                seconds.append(elapsed)
        runs.append({"observations/mem0": recall_table(ranked)})
        latency_runs.append(
            {"p50_ms": round(1000 * percentile(seconds, 50), 2), "p95_ms": round(1000 * percentile(seconds, 95), 2)}
        )
    return {
        "recall": median_tables(runs)["observations/mem0"],
        "latency_in_process_ms": {
            stat: statistics.median(run[stat] for run in latency_runs) for stat in latency_runs[0]
        },
        "add_seconds": round(add_seconds, 1),
    }


def median_tables(runs: list[dict]) -> dict:
    """Per cell, the median over the runs that measured it (identical when retrieval is deterministic)."""
    merged: dict = {}
    for key in runs[0]:
        merged[key] = {}
        for group, row in runs[0][key].items():
            if group == "questions":
                merged[key][group] = row
                continue
            merged[key][group] = {k: statistics.median(run[key][group][k] for run in runs if key in run) for k in row}
    return merged


def print_tables(split: str, tables: dict, latencies: dict) -> None:
    print(f"\nLoCoMo {split}: recall@k (%), all categories")
    print(f"{'corpus/mode':24} " + " ".join(f"{'@' + str(k):>6}" for k in KS) + "   p50 ms  p95 ms")
    for key, table in tables.items():
        overall = table["overall"]
        lat = latencies[key]
        print(
            f"{key:24} " + " ".join(f"{overall[k]:6.1f}" for k in KS) + f"   {lat['p50_ms']:6.1f}  {lat['p95_ms']:6.1f}"
        )
    for corpus in CORPORA:
        paper = PAPER[corpus]["overall"]
        print(f"{corpus + '/paper DRAGON':24} " + " ".join(f"{paper[k]:6.1f}" for k in KS))
    print("\nrecall@10 per category")
    categories = ["single-hop", "multi-hop", "temporal", "open-domain", "adversarial"]
    print(f"{'corpus/mode':24} " + " ".join(f"{c:>12}" for c in categories))
    for key, table in tables.items():
        print(f"{key:24} " + " ".join(f"{table.get(c, {}).get(10, float('nan')):12.1f}" for c in categories))
    for corpus in CORPORA:
        paper = PAPER_CATEGORY_AT_10[corpus]
        print(
            f"{corpus + '/paper DRAGON':24} "
            + " ".join(f"{paper[c]:12.1f}" if paper[c] is not None else f"{'-':>12}" for c in categories)
        )


def mem0_ratios(mem0: dict, tables: dict, latencies: dict) -> dict:
    """Ours (observations, hybrid, over HTTP) against mem0 (in-process)."""
    ours, ours_latency = tables["observations/hybrid"]["overall"], latencies["observations/hybrid"]
    return {
        **{f"recall@{k}_ours_over_mem0": round(ours[k] / mem0["recall"]["overall"][k], 3) for k in KS},
        **{
            f"{stat}_mem0_over_ours": round(mem0["latency_in_process_ms"][stat] / ours_latency[stat], 2)
            for stat in ("p50_ms", "p95_ms")
        },
    }


def print_mem0(mem0: dict) -> None:
    overall = mem0["recall"]["overall"]
    latency = mem0["latency_in_process_ms"]
    print("\nmem0 2.2.1, same observations (infer=False), full search with spaCy lemmas, in-process")
    print(
        f"{'observations/mem0':24} "
        + " ".join(f"{overall[k]:6.1f}" for k in KS)
        + f"   {latency['p50_ms']:6.1f}  {latency['p95_ms']:6.1f}"
    )
    print("ratios (ours hybrid over HTTP vs mem0): " + ", ".join(f"{k} {v}" for k, v in mem0["ratios"].items()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    parser.add_argument("--split", choices=sorted(SPLITS), default="dev")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="hybrid mode only, one conversation (make bench)")
    parser.add_argument("--mem0", action="store_true", help="also mem0 on the same observations, same run")
    parser.add_argument("--mem0-repeats", type=int, default=0, help="mem0's search runs (default: --repeats)")
    parser.add_argument(
        "--workers", type=int, default=1, help="concurrent clients; latencies are per request under that concurrency"
    )
    parser.add_argument(
        "--graph-study",
        default="",
        help="comma-separated MEMORY_GRAPH_WEIGHT:MEMORY_GRAPH_HOPS pairs to compare on observations/hybrid",
    )
    parser.add_argument("--output", help="results file name (default: locomo_<split>[_quick].json)")
    args = parser.parse_args()
    sample_ids = list(SPLITS[args.split])
    modes = MODES
    if args.quick:
        sample_ids, modes = sample_ids[:1], ("hybrid",)
    conversations = load_conversations(args.locomo, sample_ids=sample_ids)
    info = machine()
    with throwaway_stack() as stack:
        agents = import_split(stack, locomo=args.locomo, sample_ids=sample_ids)
        base_url = stack.start_web()
        embed_seconds = embed_messages(stack)
        print(f"one worker embedded the imported messages in {embed_seconds:.0f}s")
        runs, latency_runs = [], []
        for repeat in range(args.repeats):
            # Retrieval is deterministic: the first run covers every mode, the repeats the default (hybrid) mode,
            # for the latency medians and to show that the figures do not move.
            started = time.monotonic()
            tables, latencies = run_once(
                conversations,
                agents,
                base_url,
                modes=modes if repeat == 0 else ("hybrid",),
                corpora=CORPORA,
                workers=args.workers,
            )
            runs.append(tables)
            latency_runs.append(latencies)
            print(f"run {repeat + 1}/{args.repeats}: {time.monotonic() - started:.0f}s", flush=True)
        mem0 = run_mem0(stack, conversations, repeats=args.mem0_repeats or args.repeats) if args.mem0 else None
        pairs = [pair for pair in args.graph_study.split(",") if pair]
        study = graph_study(stack, conversations, agents, pairs=pairs, workers=args.workers) if pairs else None
    tables = median_tables(runs)
    latencies = {
        key: {stat: statistics.median(run[key][stat] for run in latency_runs if key in run) for stat in cell}
        for key, cell in latency_runs[0].items()
    }
    print_tables(args.split, tables, latencies)
    if study:
        print_graph_study(study)
    if mem0:
        mem0["ratios"] = mem0_ratios(mem0, tables, latencies)
        print_mem0(mem0)
    result = {
        "benchmark": "locomo_retrieval",
        "split": args.split,
        "conversations": sample_ids,
        "questions": sum(len(c.questions) for c in conversations),
        "skipped_questions_without_usable_evidence": sum(c.skipped_questions for c in conversations),
        "repeats": args.repeats,
        "workers": args.workers,
        "quick": args.quick,
        "machine": info,
        "recall": tables,
        "latency_http_ms": latencies,
        "paper_dragon": {"overall": PAPER, "category_at_10": PAPER_CATEGORY_AT_10},
        "mem0": mem0,
        "graph_settings": {
            name: os.environ.get(name, "default") for name in ("MEMORY_GRAPH_WEIGHT", "MEMORY_GRAPH_HOPS")
        },
        "graph_study": study,
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    name = args.output or f"locomo_{args.split}{'_quick' if args.quick else ''}.json"
    (RESULTS_DIR / name).write_text(json.dumps(result, indent=1))
    print(f"\nwrote {RESULTS_DIR / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
