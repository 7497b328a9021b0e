"""The full Markdown tables of single runs (benchmarks/results/*.json), as docs/benchmarks/history.md quotes them:
`python -m benchmarks.report tables [SECTION...]` prints them (docs/benchmarks/method.md, "Before and after")."""

from __future__ import annotations

import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results"
KS = ("5", "10", "25", "50")
CATEGORIES = ("single-hop", "multi-hop", "temporal", "open-domain", "adversarial")


def _load(name: str) -> dict | None:
    path = RESULTS / name
    return json.loads(path.read_text()) if path.exists() else None


def locomo(split: str) -> None:
    run = _load(f"locomo_{split}.json")
    if not run:
        return
    machine = run["machine"]
    print(
        f"\n#### {split} split ({', '.join(run['conversations'])}; {run['questions']} questions, "
        f"{run['repeats']} runs; {machine['date'][:10]}, load {machine['load_average_at_start']:.1f})\n"
    )
    print("| corpus | mode | R@5 | R@10 | R@25 | R@50 | HTTP p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|---|---|")
    for key, table in run["recall"].items():
        corpus, mode = key.split("/")
        latency = run["latency_http_ms"][key]
        cells = " | ".join(f"{table['overall'][k]:.1f}" for k in KS)
        print(f"| {corpus} | {mode} | {cells} | {latency['p50_ms']:.0f} | {latency['p95_ms']:.0f} |")
    for corpus in ("turns", "observations"):
        paper = run["paper_dragon"]["overall"][corpus]["overall"]
        print(f"| {corpus} | paper (DRAGON) | " + " | ".join(f"{paper[k]:.1f}" for k in KS) + " | | |")
    if run.get("mem0"):
        mem0 = run["mem0"]
        cells = " | ".join(f"{mem0['recall']['overall'][k]:.1f}" for k in KS)
        latency = mem0["latency_in_process_ms"]
        print(
            f"| observations | mem0 2.2.1 (in-process) | {cells} | {latency['p50_ms']:.0f} | {latency['p95_ms']:.0f} |"
        )
    print("\nRecall@10 per category:\n")
    print("| corpus | mode | " + " | ".join(CATEGORIES) + " |")
    print("|---|---|" + "---|" * len(CATEGORIES))
    for key, table in run["recall"].items():
        corpus, mode = key.split("/")
        cells = " | ".join(f"{table[c]['10']:.1f}" if c in table else "-" for c in CATEGORIES)
        print(f"| {corpus} | {mode} | {cells} |")
    for corpus in ("turns", "observations"):
        paper = run["paper_dragon"]["category_at_10"][corpus]
        cells = " | ".join(f"{paper[c]:.1f}" if paper[c] is not None else "-" for c in CATEGORIES)
        print(f"| {corpus} | paper (DRAGON) | {cells} |")
    if run.get("mem0"):
        table = run["mem0"]["recall"]
        print("| observations | mem0 2.2.1 | " + " | ".join(f"{table[c]['10']:.1f}" for c in CATEGORIES) + " |")
        print(
            "\nOurs (hybrid, over HTTP) against mem0 (in-process): "
            + ", ".join(f"{name} {value}" for name, value in run["mem0"]["ratios"].items())
        )


def locomo_before_after(split: str, *, before_name: str, after_name: str) -> None:
    """Recall@5 and @10 (and per category at 10) of a run of the code before a change against one after it."""
    before, after = _load(before_name.format(split=split)), _load(after_name.format(split=split))
    if not before or not after:
        return
    print(
        f"\n#### {split} split, before ({before['machine']['date'][:16]} UTC) and after "
        f"({after['machine']['date'][:16]} UTC)\n"
    )
    print("| corpus | mode | R@5 before → after | R@10 before → after | " + " | ".join(CATEGORIES) + " (R@10) |")
    print("|---|---|---|---|" + "---|" * len(CATEGORIES))
    for key, new in after["recall"].items():
        old = before["recall"][key]
        corpus, mode = key.split("/")
        categories = " | ".join(
            f"{old[c]['10']:.1f} → {new[c]['10']:.1f}" if c in new and c in old else "-" for c in CATEGORIES
        )
        print(
            f"| {corpus} | {mode} | {old['overall']['5']:.1f} → {new['overall']['5']:.1f} | "
            f"{old['overall']['10']:.1f} → {new['overall']['10']:.1f} | {categories} |"
        )


def search_latency(name: str = "search_latency.json") -> None:
    run = _load(name)
    if not run:
        return
    machine = run["machine"]
    print(
        f"\n#### Search latency ({machine['date'][:10]}, load {machine['load_average_at_start']:.1f}; "
        f"composed vectors vs real embeddings: cosine {run['composition_fidelity']['mean']:.3f} mean)\n"
    )
    print("| facts | scope | concurrency | p50 ms | p95 ms | p99 ms | searches/s |")
    print("|---|---|---|---|---|---|---|")
    for scale, row in sorted(run["scales"].items(), key=lambda item: int(item[0])):
        cells = [(f"{scope.replace('_', '-')}", concurrency, row[f"{scope}_c{concurrency}"])
                 for scope in ("per_user", "agent_wide") for concurrency in (1, 8)]  # fmt: skip
        if "per_user_c1_mixed_load" in row:
            cells.append(("per-user, under ingestion + formation", 1, row["per_user_c1_mixed_load"]))
        for scope, concurrency, cell in cells:
            print(
                f"| {int(scale):,} | {scope} | {concurrency} | {cell['p50_ms']:.1f} | "
                f"{cell['p95_ms']:.1f} | {cell['p99_ms']:.1f} | {cell['searches_per_s']:.1f} |"
            )
    stages = ("embed", "text_sql", "embed_wait", "vector_sql", "fuse", "hits_sql", "serialize", "app", "http")
    print("\nWhere a search's time goes (medians of the server's Server-Timing stages, ms; concurrency 1):\n")
    print("| facts | scope | " + " | ".join(stages) + " |")
    print("|---|---|" + "---|" * len(stages))
    for scale, row in sorted(run["scales"].items(), key=lambda item: int(item[0])):
        for scope in ("per_user", "agent_wide"):
            timing = row[f"{scope}_c1"].get("stages_p50_ms", {})
            print(
                f"| {int(scale):,} | {scope.replace('_', '-')} | "
                + " | ".join(f"{timing.get(stage, 0.0):.2f}" for stage in stages)
                + " |"
            )
    parts = ("web", "postgres", "workers", "client")
    print("\nCPU per search, ms (user + system of each part of the machine over the measured searches, medians):\n")
    print("| facts | scope | concurrency | " + " | ".join(parts) + " | total |")
    print("|---|---|---|" + "---|" * (len(parts) + 1))
    for scale, row in sorted(run["scales"].items(), key=lambda item: int(item[0])):
        for scope in ("per_user", "agent_wide"):
            for concurrency in (1, 8):
                cpu = row[f"{scope}_c{concurrency}"].get("cpu_ms_per_search")
                if cpu:
                    print(
                        f"| {int(scale):,} | {scope.replace('_', '-')} | {concurrency} | "
                        + " | ".join(f"{cpu[part]:.1f}" for part in parts)
                        + f" | {sum(cpu.values()):.1f} |"
                    )
    print("\n| facts | load s | per-agent HNSW indexes (build s) | agent-wide path: recall@10 vs exact by ef_search | "
          "RSS web MB (each process) | RSS worker MB |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for scale, row in sorted(run["scales"].items(), key=lambda item: int(item[0])):
        vector = row["agent_wide_vector_recall"]
        recall = ", ".join(f"{ef}: {value:.3f}" for ef, value in vector["recall_at_10_by_ef_search"].items())
        each = ", ".join(f"{size:.0f}" for size in row["rss_mb"].get("web_processes", []))
        print(
            f"| {int(scale):,} | {row['load_seconds']:.0f} | {row['agent_indexes_built']} "
            f"({row['index_build_seconds']:.0f}) | {vector['path']}: {recall} | "
            f"{row['rss_mb']['web']:.0f} ({each}) | "
            f"{row['rss_mb']['worker']:.0f} |"
        )
    if "messages" in run:
        messages = run["messages"]
        print(
            f"\nTurn search over {messages['messages']:,} embedded messages ({messages['per_user']:,} per user; "
            f"loaded in {messages['load_seconds']:.0f} s):\n"
        )
        print("| concurrency | p50 ms | p95 ms | p99 ms | searches/s | stages p50 ms |")
        print("|---|---|---|---|---|---|")
        for concurrency in (1, 8):
            cell = messages[f"per_user_c{concurrency}"]
            timing = ", ".join(f"{stage} {value:.1f}" for stage, value in cell["stages_p50_ms"].items() if value)
            print(
                f"| {concurrency} | {cell['p50_ms']:.1f} | {cell['p95_ms']:.1f} | {cell['p99_ms']:.1f} | "
                f"{cell['searches_per_s']:.1f} | {timing} |"
            )


def search_latency_before_after(before_name: str, after_name: str) -> None:
    """The same cells from a run of the code before a change (its own result file) and one of the current code."""
    before, after = _load(before_name), _load(after_name)
    if not before or not after:
        return
    print(
        f"\n#### Search before and after (before: {before['machine']['date'][:16]} UTC, load at start "
        f"{before['machine']['load_average_at_start']:.1f}; after: {after['machine']['date'][:16]} UTC, load at start "
        f"{after['machine']['load_average_at_start']:.1f})\n"
    )
    print("| facts | scope | concurrency | p50 ms before → after | p95 ms before → after | searches/s before → after |")
    print("|---|---|---|---|---|---|")
    for scale in sorted(set(before["scales"]) & set(after["scales"]), key=int):
        for scope in ("per_user", "agent_wide"):
            for concurrency in (1, 8):
                key = f"{scope}_c{concurrency}"
                old, new = before["scales"][scale][key], after["scales"][scale][key]
                print(
                    f"| {int(scale):,} | {scope.replace('_', '-')} | {concurrency} | "
                    f"{old['p50_ms']:.1f} → **{new['p50_ms']:.1f}** | {old['p95_ms']:.1f} → **{new['p95_ms']:.1f}** | "
                    f"{old['searches_per_s']:.1f} → **{new['searches_per_s']:.1f}** |"
                )


def search_latency_variants(name: str = "search_latency_graph_cost.json") -> None:
    """`search_latency.py --variants`: web servers of several checkouts and settings over one store, per scale."""
    run = _load(name)
    if not run or "variants" not in run:
        return
    for scale, compared in run["variants"].items():
        low, high = compared["load_average_min_max"]
        print(
            f"\n#### {int(scale):,} facts, concurrency 1, medians of {compared['rounds']} alternated rounds "
            f"({run['machine']['date'][:16]} UTC, load average {low:.1f} to {high:.1f})\n"
        )
        print("| variant | code | settings | scope | p50 ms | p95 ms | `graph_sql` p50 ms | CPU ms web / PostgreSQL |")
        print("|---|---|---|---|---|---|---|---|")
        for variant, cells in compared["variants"].items():
            settings = ", ".join(f"{key}={value}" for key, value in cells["settings_env"].items())
            for cell in ("per_user_c1", "agent_wide_c1"):
                figures = cells[cell]
                cpu = figures["cpu_ms_per_search"]
                graph_sql = figures["stages_p50_ms"]["graph_sql"]
                print(
                    f"| {variant} | {cells['revision']} | {settings} | {cell.removesuffix('_c1').replace('_', ' ')} | "
                    f"{figures['p50_ms']:.1f} | {figures['p95_ms']:.1f} | {graph_sql:.2f} | "
                    f"{cpu['web']:.2f} / {cpu['postgres']:.2f} |"
                )
        statements = compared.get("graph_statements")
        if statements:
            print(
                f"\nThe graph statements alone, in-process, {statements['calls']} questions: p50 "
                f"{statements['p50_ms']['prepared']} ms prepared, {statements['p50_ms']['unprepared']} ms unprepared; "
                f"answers that differ: {statements['answers_differ']}."
            )


def ingestion_formation() -> None:
    run = _load("ingestion_formation.json")
    if not run:
        return
    machine = run["machine"]
    print(f"\n#### Ingestion and formation ({machine['date'][:10]}, load {machine['load_average_at_start']:.1f})\n")
    print("| clients | messages/s (median) | runs |")
    print("|---|---|---|")
    for name, cell in run["ingestion"].items():
        runs = ", ".join(f"{r['messages_per_s']:.0f}" for r in cell["runs"])
        print(f"| {name.split('_')[1]} | {cell['messages_per_s_median']:.0f} | {runs} |")
    formation = run["formation"]
    print(
        f"\nFormation, 20-message sessions, instant LLM, one worker: backlog drained at "
        f"{formation['drain_ms_per_session_median']:.1f} ms per session (median of {len(formation['runs'])} runs); "
        f"job duration minus LLM time p50 {formation['job_p50_ms_median']:.1f} ms."
    )
    for r in formation["runs"]:
        print(
            f"- {r['sessions']} sessions: drain {r['drain_seconds']} s, {r['drain_ms_per_session']} ms/session, "
            f"job p50 {r['job_p50_ms']} / p95 {r['job_p95_ms']} ms, {r['facts_added']} facts, "
            f"{r['reflections_added']} reflections, {r['failed_jobs']} failed"
        )


def formation_scale() -> None:
    """benchmarks/formation_scale.py: the run at this code and, when present, the one at the code before (legacy
    workers), and the overhead runs of ingestion_formation.py --only formation."""
    for name, label in (("formation_scale_before.json", "before"), ("formation_scale.json", "after")):
        run = _load(name)
        if not run:
            continue
        machine, settings, summary = run["machine"], run["settings"], run["summary"]
        loads = [r["load_average_at_start"] for r in run["runs"]]
        print(
            f"\n#### Formation against the stub LLM, {label} ({machine['date'][:16]} UTC; "
            f"workers {settings['workers']}; "
            f"{settings['sessions']} sessions a run; latency median {settings['latency_median']} s, p95 "
            f"{settings['latency_p95']} s, {settings['rate_429']:.0%} 429, {settings['rate_500']:.0%} 500; "
            f"load average at the runs' start {', '.join(f'{load:.1f}' for load in loads)})\n"
        )
        print(
            "| run | sessions/min | drain s | LLM calls/session | 429 / 500 answered | failed jobs | facts lost | "
            "stored twice | messages formed twice | DB connections max | CPU ms/session: formation worker, "
            "PostgreSQL, stub |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for number, r in enumerate(run["runs"], start=1):
            t, cpu = r["throughput"], r.get("cpu_ms_per_session", {})
            outcomes = t["llm_call_outcomes"]
            worker_cpu = cpu.get("formation-worker", cpu.get("worker", 0))
            print(
                f"| {number} | {t['sessions_per_minute']:.0f} | {t['drain_seconds']:.0f} | "
                f"{t['llm_calls_per_session']:.2f} | {outcomes.get('rate_limited', 0)} / "
                f"{outcomes.get('provider_error', 0)} | {t['failed_jobs']} | {t['facts_lost']} | "
                f"{t['facts_stored_twice']} | {t['messages_formed_twice']} | {t['db_connections_max']} | "
                f"{worker_cpu:.0f}, {cpu.get('postgres', 0):.0f}, {cpu.get('llm_stub', 0):.0f} |"
            )
        print(f"\nMedian: **{summary['sessions_per_minute_median']:.0f} sessions per minute**.")
        if "append_p95_ms_alone_median" in summary:
            print("\n| operation | p95 ms alone (median of runs) | p95 ms during formation | change |")
            print("|---|---|---|---|")
            for operation in ("append", "search"):
                print(
                    f"| {operation} | {summary[f'{operation}_p95_ms_alone_median']:.0f} | "
                    f"{summary[f'{operation}_p95_ms_with_formation_median']:.0f} | "
                    f"{summary[f'{operation}_p95_change_percent']:+.0f}% |"
                )
    for name, label in (
        ("ingestion_formation_formation_before.json", "before"),
        ("ingestion_formation_formation.json", "after"),
    ):
        run = _load(name)
        if not run:
            continue
        formation, machine = run["formation"], run["machine"]
        print(
            f"\nOverhead, {label} ({machine['date'][:16]} UTC, load {machine['load_average_at_start']:.1f}):"
            f" instant LLM, one worker process: drain {formation['drain_ms_per_session_median']:.1f} ms per session, "
            f"job minus LLM p50 {formation['job_p50_ms_median']:.1f} ms (medians of {len(formation['runs'])} runs: "
            + ", ".join(f"{r['drain_ms_per_session']} / {r['job_p50_ms']}" for r in formation["runs"])
            + ")."
        )


END_TO_END_RUNS = (
    "locomo_end_to_end_offline_dev.json",
    "locomo_end_to_end_offline_eval.json",
    "locomo_end_to_end_local_dev.json",
)


def _end_to_end_label(run: dict) -> str:
    sessions = f", first {run['sessions_per_conversation']} sessions each" if run["sessions_per_conversation"] else ""
    return f"{run['provider']} ({run['model']}), {run['split']}{sessions}"


def locomo_end_to_end() -> None:
    """Recall of the evidence through the facts the service formed, next to retrieval over what LoCoMo gives; the
    memory formed; each step's reply validity; the junk audit."""
    runs = [run for run in map(_load, END_TO_END_RUNS) if run]
    if not runs:
        return
    print("\n#### Recall of the evidence through fact search (hybrid), next to retrieval only\n")
    print("| run | questions | R@5 | R@10 | R@25 | R@50 | measured |")
    print("|---|---|---|---|---|---|---|")
    for run in runs:
        overall, machine = run["recall"]["overall"], run["machine"]
        load = f"load {machine['load_average_at_start']:.1f} to {machine['load_average_at_end']:.1f}"
        print(
            f"| formed by the service: {_end_to_end_label(run)} | {run['questions']} | "
            + " | ".join(f"{overall[k]:.1f}" for k in KS)
            + f" | {machine['date'][:16].replace('T', ' ')} UTC, {load} |"
        )
        for split, corpora in run["retrieval_only"].items():
            for corpus, figures in corpora.items():
                print(
                    f"| retrieval only, {corpus} given ({split}) | | "
                    + " | ".join(f"{figures[k]:.1f}" for k in KS)
                    + " | benchmarks/locomo_retrieval.py |"
                )
    print("\n#### The memory formed\n")
    print(
        "| run | sessions | facts | per session | words (mean / max) | exact duplicates | junk | reflections | "
        "LLM calls / session | tokens / session | s / session (mean / max) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for run in runs:
        memory, audit = run["memory"], run["junk_audit"]
        print(
            f"| {_end_to_end_label(run)} | {memory['sessions']} | {memory['facts_current']} | "
            f"{memory['facts_per_session']} | {memory['fact_words_mean']} / {memory['fact_words_max']} | "
            f"{memory['exact_duplicates']} | {audit['junk_percent']}% | {memory['reflections']} | "
            f"{memory['llm_calls_per_session']} | {memory['tokens_per_session']} | "
            f"{memory['seconds_per_session_mean']} / {memory['seconds_per_session_max']} |"
        )
    print("\n#### Junk audit of the facts formed (benchmarks/fact_audit.py), % of facts\n")
    print(
        "| run | facts | junk | questions | greetings | restate another fact | restate injected memory | ungrounded |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for run in runs:
        audit = run["junk_audit"]
        print(
            f"| {_end_to_end_label(run)} | {audit['facts']} | {audit['junk_percent']} | {audit['question_percent']} | "
            f"{audit['greeting_percent']} | {audit['restates_other_fact_percent']} | "
            f"{audit['restates_injected_memory_percent']} | {audit.get('ungrounded_percent', '-')} |"
        )
    print("\n#### Reply validity per step\n")
    print("| run | step | replies | valid | valid, a rule broken | rules broken (items) |")
    print("|---|---|---|---|---|---|")
    for run in runs:
        for step in run["reply_validity"]:
            broken = ", ".join(f"{rule} {count}" for rule, count in sorted(step["violations"].items())) or "none"
            print(
                f"| {_end_to_end_label(run)} | {step['step']} | {step['replies']} | {step['valid_percent']}% | "
                f"{step['violating_percent']}% | {broken} |"
            )


SECTIONS = {
    "locomo": lambda: (locomo("dev"), locomo("eval")),
    "locomo-before-after": lambda: [
        locomo_before_after(split, before_name=before, after_name=after)
        for before, after in (
            ("locomo_{split}_before.json", "locomo_{split}_issue12.json"),  # the search redesign (issue 12)
            ("locomo_{split}_issue12.json", "locomo_{split}.json"),  # time, neighbours and speakers (issue 14)
        )
        for split in ("dev", "eval")
    ],
    "latency": search_latency,
    "latency-before-after": lambda: (
        search_latency_before_after("search_latency_before_quiet.json", "search_latency_after_quiet.json"),
        search_latency_before_after("search_latency_before.json", "search_latency.json"),
    ),
    "graph-cost": search_latency_variants,
    "ingestion": ingestion_formation,
    "formation": formation_scale,
    "end-to-end": locomo_end_to_end,
}
