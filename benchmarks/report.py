"""The benchmarks' current figures on one page, written from their result files.

    python -m benchmarks.report                  # writes docs/benchmarks/index.md
    python -m benchmarks.report --check          # exits 1 when docs/benchmarks/index.md is not what it would write
    python -m benchmarks.report tables latency   # the full tables of past runs, as docs/benchmarks/history.md has them

The manifest below names every file under benchmarks/results/ and what it backs: CURRENT, the files the page is
written from; HISTORY, the files behind the dated tables of docs/benchmarks/history.md (`tables` prints several of
them again). tests/benchmarks/test_report.py checks that the manifest and the folder agree (the gitignored
`*_quick.json` of `make bench` aside) and that the committed page is what this script writes now: a new result file
is named here or removed, and the page cannot go stale. docs/benchmarks/method.md says how each figure is measured.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent
RESULTS = REPO_DIR / "benchmarks" / "results"
PAGE = REPO_DIR / "docs" / "benchmarks" / "index.md"

# The files docs/benchmarks/index.md is written from, and what each gives it.
CURRENT = {
    "quiet_after_1.json": "fact search at 10k facts, the current code on a quiet machine (the median of three runs; "
    "also the after of a history.md table)",
    "quiet_after_2.json": "fact search at 10k facts (the second of three runs)",
    "quiet_after_3.json": "fact search at 10k facts (the third of three runs)",
    "search_latency_graph_cost_final.json": "fact search at 1M facts with one client, and the graph signal's cost",
    "search_latency.json": "fact search at 1M facts with 8 clients, agent-wide recall at 1M, turn search over 1M "
    "messages; the plot search_latency.png; history.md's tables of that run",
    "locomo_dev_graph_turns.json": "LoCoMo retrieval recall, dev split, at the product's defaults",
    "locomo_eval_graph_turns.json": "LoCoMo retrieval recall, eval split, at the product's defaults",
    "locomo_dev_mem0.json": "mem0 side by side, dev split (recall and latency)",
    "locomo_eval.json": "mem0 side by side, eval split; history.md's tables of that run and, with locomo_dev.json, "
    "the plot locomo_recall.png",
    "locomo_end_to_end_offline_dev.json": "LoCoMo end to end, the offline extractor, dev split",
    "locomo_end_to_end_offline_eval.json": "LoCoMo end to end, the offline extractor, eval split",
    "locomo_end_to_end_local_dev.json": "LoCoMo end to end, the local Gemma 3 270M, dev split (first 3 sessions)",
    "ingestion_formation.json": "ingestion through the batch endpoint",
    "ingestion_formation_formation.json": "formation's overhead without LLM time",
    "formation_scale.json": "formation at scale against the stub LLM, and search and append beside it",
    "mcp_after_3.json": "MCP over HTTP against REST (the first of three runs)",
    "mcp_after_4.json": "MCP over HTTP against REST (the second of three runs)",
    "mcp_after_5.json": "MCP over HTTP against REST (the third of three runs)",
    "metrics_overhead.json": "what the Prometheus metrics cost a search",
    "query_encoder.json": "the query encoder alone: the served 8-bit graph against fp32",
    "time_devset_offline.json": "the development set for time, the offline extractor",
    "time_devset_scripted.json": "the development set for time, the scripted LLM (a good model's extraction)",
}
# The files behind the dated tables of docs/benchmarks/history.md, by the section that has them.
HISTORY = {
    "isolation_formation_scale_quiet_gate1.json": "formation gives way to requests (section 19): the gate at one slot, "
    "quiet machine",
    "isolation_formation_scale_quiet_nice19.json": "the same: the autogroup at nice 19, no gate, quiet machine",
    "isolation_formation_scale_quiet_nice6.json": "the same: the workers' autogroup at nice 6, no gate, quiet machine",
    "time_topics_scripted_before.json": "what stopped, what holds again, the topic a question asks (section 18): the "
    "development set for time, scripted LLM, before (main c04463a)",
    "time_topics_offline_before.json": "the same, offline extractor, before",
    "time_topics_locomo_dev.json": "the same: LoCoMo dev through the HTTP API after (every cell as before)",
    "time_topics_locomo_eval.json": "LoCoMo eval through the HTTP API, main after the merges of sections 18-20",
    "isolation_formation_scale_before.json": "formation gives way to requests: formation at scale and the mixed load, "
    "before (main c04463a, the lead's run on the quiet machine)",
    "isolation_formation_scale_gate1.json": "formation gives way to requests: the same, after, the gate at one slot "
    "(shared host, load 16 to 21)",
    "isolation_formation_scale_nogate.json": "formation gives way to requests: the same code with the gate off, the "
    "next run (shared host, load 13 to 19)",
    "i38_locomo_eval_before.json": "categories, profile, list questions, reranker and junk merged (issue 38): LoCoMo "
    "eval through the HTTP API, before (the morning's main)",
    "i38_locomo_eval_after.json": "the same, after all four branches merged",
    "i38_e2e_offline_eval_before.json": "the same merge: LoCoMo end to end, offline, eval, before",
    "i38_e2e_offline_eval_after.json": "the same merge: LoCoMo end to end, offline, eval, after",
    "i38_locomo_dev_merged.json": "the same merge: LoCoMo dev with the list signal (weight 0.5)",
    "i38_locomo_dev_merged_no_list.json": "the same merge: LoCoMo dev with the list signal off (weight 0)",
    "i38_dev_session_diversity_off.json": "list questions: a session-diversity cut tried on LoCoMo dev, off",
    "i38_dev_session_diversity_on.json": "list questions: the session-diversity cut on (not adopted: multi-hop fell)",
    "listturns_locomo_dev_before.json": "list questions narrowed by their words: LoCoMo dev over HTTP, before",
    "listturns_locomo_dev_after.json": "list questions narrowed by their words: LoCoMo dev, after (weight 1)",
    "listturns_locomo_eval_after.json": "list questions narrowed by their words: LoCoMo eval, after (before: i38's)",
    "listturns_dev_study.json": "list questions: the designs tried on LoCoMo dev (narrowing, weights, turns filed)",
    "i34_extract_locomo_dev_before.json": "world time set by formation (issue 34): LoCoMo dev recall before",
    "i34_extract_locomo_dev_after.json": "world time set by formation (issue 34): LoCoMo dev recall after",
    "i34_extract_locomo_eval_before.json": "world time set by formation (issue 34): LoCoMo eval recall before",
    "i34_extract_locomo_eval_after.json": "world time set by formation (issue 34): LoCoMo eval recall after",
    "i36_search_latency_10k_1.json": "secrets in six languages (issue 36): fact and turn search at 10k, before and "
    "after, run 1",
    "i36_search_latency_10k_2.json": "secrets in six languages (issue 36): fact and turn search at 10k, before and "
    "after, run 2",
    "i36_formation_cpu_ab.json": "secrets in six languages (issue 36): formation CPU per session, before and after",
    "categories_accuracy.json": "memory categories: offline category accuracy on the labelled set, tuning and "
    "held-out parts, with their confusion",
    "categories_formation_cpu_ab.json": "memory categories: offline formation CPU per session, before and after",
    "i36_search_latency_windows_1.json": "secrets in six languages (issue 36): the screen read in windows, fact and "
    "turn search at 10k, before and after, run 1",
    "i36_search_latency_windows_2.json": "secrets in six languages (issue 36): the screen read in windows, fact and "
    "turn search at 10k, before and after, run 2",
    "layout_search_latency_10k_1.json": "the layout change (issue 33): fact search at 10k, before and after, run 1",
    "layout_search_latency_10k_2.json": "the layout change (issue 33): fact search at 10k, before and after, run 2",
    "layout_locomo_dev_before.json": "the layout change (issue 33): LoCoMo dev recall before",
    "layout_locomo_dev_after.json": "the layout change (issue 33): LoCoMo dev recall after (identical in every cell)",
    "ab_before_1.json": "gunicorn again, with /mcp inside it: before (uvicorn), run 1 of 3",
    "ab_before_2.json": "gunicorn again, with /mcp inside it: before (uvicorn), run 2 of 3",
    "ab_before_3.json": "gunicorn again, with /mcp inside it: before (uvicorn), run 3 of 3",
    "ab_after_1.json": "gunicorn again, with /mcp inside it: after (gunicorn), run 1 of 3",
    "ab_after_2.json": "gunicorn again, with /mcp inside it: after (gunicorn), run 2 of 3",
    "ab_after_3.json": "gunicorn again, with /mcp inside it: after (gunicorn), run 3 of 3",
    "quiet_before_1.json": "gunicorn again, the quiet A/B: before, run 1 of 3 (quiet_after_*.json are its after)",
    "quiet_before_2.json": "gunicorn again, the quiet A/B: before, run 2 of 3",
    "quiet_before_3.json": "gunicorn again, the quiet A/B: before, run 3 of 3",
    "wm_gthread_1.json": "the worker model without a hand-off: gthread",
    "wm_sync_1.json": "the worker model without a hand-off: sync workers",
    "scale_before_issue25.json": "10k and 1M facts, before and after issue 25: before",
    "scale_after_issue25.json": "10k and 1M facts, before and after issue 25: after",
    "search_latency_web_server_ab.json": "the web server production runs: uvicorn against gunicorn",
    "search_latency_query_fp32.json": "the query encoder per search through HTTP: fp32, round 1",
    "search_latency_query_int8.json": "the query encoder per search through HTTP: 8-bit, round 1",
    "search_latency_query_fp32_round2.json": "the query encoder per search through HTTP: fp32, round 2",
    "search_latency_query_int8_round2.json": "the query encoder per search through HTTP: 8-bit, round 2",
    "search_latency_before.json": "search before and after the redesign (issue 12): before, 10k to 1M",
    "search_latency_before_quiet.json": "search before and after the redesign: before, quiet, 10k and 100k",
    "search_latency_after_quiet.json": "search before and after the redesign: after, quiet, 10k and 100k",
    "search_latency_access_task.json": "access tracking by a Celery task per search (before the Redis log)",
    "search_latency_issue14_before.json": "what the new signals of issue 14 cost: before",
    "search_latency_issue14_after.json": "what the new signals of issue 14 cost: after",
    "search_latency_graph_off.json": "what the graph signal costs (issue 27), first measure: graph off",
    "search_latency_graph_on.json": "what the graph signal costs (issue 27), first measure: graph on",
    "search_latency_graph_cost.json": "the graph signal: the link join and prepared statements, before and after",
    "locomo_dev.json": "LoCoMo dev split at the final code of issue 14; the plot docs/benchmarks/locomo_recall.png",
    "locomo_dev_before.json": "recall before and after the search redesign (issue 12): dev, before",
    "locomo_eval_before.json": "recall before and after the search redesign (issue 12): eval, before",
    "locomo_dev_issue12.json": "recall after the search redesign, before issue 14 (dev); mem0 on a quiet machine",
    "locomo_eval_issue12.json": "recall after the search redesign, before issue 14 (eval)",
    "locomo_explore.json": "what was tried for the search redesign (dev split, in-process)",
    "locomo_explore_time_hop.json": "what was tried for issue 14: time, neighbours, speakers (dev, in-process)",
    "locomo_dev_graph.json": "the entity graph as a signal of fact search: dev, per graph weight",
    "locomo_eval_graph.json": "the entity graph as a signal of fact search: eval, the default against off",
    "locomo_dev_query_fp32.json": "the query encoder's recall through the product: fp32",
    "locomo_dev_query_int8_per_channel.json": "the query encoder's recall through the product: int8 per channel",
    "locomo_dev_query_int8_per_channel_ffn_out_fp32.json": "the query encoder's recall: its FFN output in fp32",
    "locomo_dev_query_int8_blockwise.json": "the query encoder's recall through the product: blockwise 128 (served)",
    "locomo_eval_query_fp32.json": "issue 25's recall goal, eval: fp32 query graph",
    "locomo_eval_query_int8.json": "issue 25's recall goal, eval: the served 8-bit query graph",
    "mcp_overhead.json": "MCP over HTTP against REST under uvicorn, quiet machine",
    "mcp_overhead_loaded.json": "MCP over HTTP against REST under uvicorn, loaded machine",
    "mcp_before_3.json": "MCP since issue 25: before (uvicorn), run 1 of 3",
    "mcp_before_4.json": "MCP since issue 25: before (uvicorn), run 2 of 3",
    "mcp_before_5.json": "MCP since issue 25: before (uvicorn), run 3 of 3",
    "formation_scale_before.json": "formation at production scale (issue 13): before, the legacy workers",
    "ingestion_formation_formation_before.json": "formation overhead without LLM time: before issue 13",
    "time_devset_offline_before.json": "world time (issue 34): the development set for time, offline, before",
    "time_devset_scripted_before.json": "world time (issue 34): the development set for time, scripted LLM, before",
    "i34_search_locomo_dev_after.json": "world time in search (issue 34): LoCoMo dev recall after the tiers",
    "i34_search_locomo_eval_after.json": "world time in search (issue 34): LoCoMo eval recall after the tiers",
    "i34_search_latency_10k_1.json": "world time in search (issue 34): fact search at 10k, before and after",
    "i34_extract_time_devset_offline.json": "world time set by formation (issue 34): the time set, offline",
    "i34_extract_time_devset_scripted.json": "world time set by formation (issue 34): the time set, scripted LLM",
    "expiry_search_latency_10k.json": "fact expiry (issue 35): fact search at 10k, before and after, run 1",
    "expiry_search_latency_10k_2.json": "fact expiry (issue 35): fact search at 10k, before and after, run 2",
    "webhook_overhead.json": "webhooks (issue 35): what the outbox adds to a fact write over HTTP",
    "webhook_overhead_merged.json": "webhooks (issue 35): the same, measured again after merging world time",
    "feedback_ranking.json": "feedback (issue 35): a boost by useful feedback, LoCoMo dev (not adopted)",
    "rerank_overhead.json": "reranker (issue 38): what the rerank step adds to a fact search, against a local server",
    "rerank_overhead_2.json": "reranker (issue 38): the same, run again at a lower load",
    "junk_locomo_end_to_end_offline_dev_before.json": "offline formation a reader can trust (issue 38): LoCoMo end to "
    "end, offline, dev, before",
    "junk_locomo_end_to_end_offline_dev_after.json": "offline formation a reader can trust (issue 38): LoCoMo end to "
    "end, offline, dev, after",
    "junk_locomo_end_to_end_offline_eval_after.json": "offline formation a reader can trust (issue 38): LoCoMo end to "
    "end, offline, eval, after (run once)",
    "junk_reader_counts.json": "offline formation a reader can trust (issue 38): a reader's count of junk in random "
    "samples of the facts formed, and the audit's agreement with the labelled set",
    "profile_list_questions_dev.json": "list questions (issue 38): LoCoMo dev R@10, entries first against the list "
    "signal, per share and weight",
    "profile_latency_1m.json": "the profile (issue 38): read time of the selector and the endpoint at 10k, 100k and "
    "1M facts",
    "profile_search_latency_10k.json": "list questions (issue 38): fact and turn search at 10k, before and after",
}
MANIFEST = CURRENT | HISTORY

QUIET = ("quiet_after_1.json", "quiet_after_2.json", "quiet_after_3.json")
MCP = ("mcp_after_3.json", "mcp_after_4.json", "mcp_after_5.json")
GRAPH_COST = "search_latency_graph_cost_final.json"
GRAPH_ON, GRAPH_OFF = "final-on", "final-off"  # its variants of the current code, the graph at its default and off
# query_encoder.json records no date of its own.
QUERY_ENCODER_MEASURED = "2026-11-24 11:42 UTC"
KS = ("5", "10", "25", "50")
CATEGORIES = ("single-hop", "multi-hop", "temporal", "open-domain", "adversarial")
SCOPES = {"per_user": "per user", "agent_wide": "agent-wide"}
SEARCH_HEADER = ["facts", "scope", "clients", "p50 ms", "p95 ms", "searches/s", "CPU ms, web / PostgreSQL", "measured",
                 "from"]  # fmt: skip
END_TO_END_HEADER = ["run", "questions", "R@5", "R@10", "R@25", "R@50", "facts", "a session", "junk", "restatements",
                     "s a session", "measured", "from"]  # fmt: skip


def _run(name: str) -> dict:
    """One of the files the page is written from."""
    if name not in CURRENT:
        raise KeyError(f"{name} is not one of the current page's result files (CURRENT in benchmarks/report.py)")
    return json.loads((RESULTS / name).read_text())


def _median(values: Iterable[float]) -> float:
    return statistics.median(list(values))


def _when(*runs: dict) -> str:
    """When the runs started (UTC), and the load average at their start."""
    dates = sorted(run["machine"]["date"] for run in runs)
    loads = [run["machine"]["load_average_at_start"] for run in runs]
    when = dates[0][:16].replace("T", " ") + " UTC"
    if len(runs) == 1:
        return f"{when}, load {loads[0]:.1f}"
    return f"{when}, {len(runs)} runs, load {min(loads):.1f} to {max(loads):.1f}"


def _from(*names: str) -> str:
    return ", ".join(f"`{name}`" for name in names)


def _verdict(value: float, *, at_most: float | None = None, at_least: float | None = None) -> str:
    met = value <= at_most if at_most is not None else value >= at_least
    return "met" if met else "**missed**"


def _prose(text: str) -> str:
    """A paragraph wrapped at 120 characters, as the docs are."""
    return "\n".join(textwrap.wrap(text, width=120, break_long_words=False, break_on_hyphens=False))


def _table(header: list[str], rows: Iterable[Iterable[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]


def _search_cell(cells: list[dict]) -> dict[str, float]:
    """The medians over runs of one cell of benchmarks/search_latency.py (one run: its own figures)."""
    return {
        "p50": _median(cell["p50_ms"] for cell in cells),
        "p95": _median(cell["p95_ms"] for cell in cells),
        "per_s": _median(cell["searches_per_s"] for cell in cells),
        "web": _median(cell["cpu_ms_per_search"]["web"] for cell in cells),
        "postgres": _median(cell["cpu_ms_per_search"]["postgres"] for cell in cells),
    }


def fact_search() -> list[str]:
    quiet = [_run(name) for name in QUIET]
    small = {
        (scope, clients): _search_cell([run["scales"]["10000"][f"{scope}_c{clients}"] for run in quiet])
        for scope in SCOPES
        for clients in (1, 8)
    }
    graph = _run(GRAPH_COST)
    at_1m = graph["variants"]["1000000"]
    on = at_1m["variants"][GRAPH_ON]
    low, high = at_1m["load_average_min_max"]
    graph_when = f"{graph['machine']['date'][:16].replace('T', ' ')} UTC, load {low:.1f} to {high:.1f}"
    large = {scope: _search_cell([on[f"{scope}_c1"]]) for scope in SCOPES}
    full = _run("search_latency.json")
    large_8 = {scope: _search_cell([full["scales"]["1000000"][f"{scope}_c8"]]) for scope in SCOPES}
    turns = {clients: _search_cell([full["messages"][f"per_user_c{clients}"]]) for clients in (1, 8)}

    def row(facts: str, scope: str, clients: int, cell: dict, when: str, source: str) -> list[object]:
        return [
            facts, scope, clients, f"{cell['p50']:.1f}", f"{cell['p95']:.1f}", f"{cell['per_s']:.1f}",
            f"{cell['web']:.1f} / {cell['postgres']:.1f}", when, source,
        ]  # fmt: skip

    quiet_when, quiet_from = _when(*quiet), "`quiet_after_{1,2,3}.json`, medians"
    rows = [row("10,000", SCOPES[s], c, small[s, c], quiet_when, quiet_from) for s in SCOPES for c in (1, 8)]
    rows += [
        row("1,000,000", "per user, naming one of the user's entities", 1, large["per_user"], graph_when,
            f"{_from(GRAPH_COST)} ({GRAPH_ON})"),
        row("1,000,000", "agent-wide", 1, large["agent_wide"], graph_when, f"{_from(GRAPH_COST)} ({GRAPH_ON})"),
        row("1,000,000", "per user", 8, large_8["per_user"], _when(full), _from("search_latency.json")),
        row("1,000,000", "agent-wide", 8, large_8["agent_wide"], _when(full), _from("search_latency.json")),
        row(f"{full['messages']['messages']:,} messages", "turn search, per user", 1, turns[1], _when(full),
            _from("search_latency.json")),
        row(f"{full['messages']['messages']:,} messages", "turn search, per user", 8, turns[8], _when(full),
            _from("search_latency.json")),
    ]  # fmt: skip
    graph_adds = {
        scale: compared["variants"][GRAPH_ON]["per_user_c1"]["p50_ms"]
        - compared["variants"][GRAPH_OFF]["per_user_c1"]["p50_ms"]
        for scale, compared in graph["variants"].items()
    }
    ef_search = str(full["settings"]["MEMORY_SEARCH_HNSW_EF_SEARCH"])
    recall_1m = full["scales"]["1000000"]["agent_wide_vector_recall"]["recall_at_10_by_ef_search"][ef_search]
    web_process_mb = max(size for run in quiet for size in run["scales"]["10000"]["rss_mb"]["web_processes"])
    per_user_p95 = large["per_user"]["p95"]
    goals = [
        ["per-user p95, one client, 10k facts: ≤ 12 ms", f"{small['per_user', 1]['p95']:.1f} ms",
         _verdict(small["per_user", 1]["p95"], at_most=12), quiet_from],
        ["per-user p95, one client, 1M facts: ≤ 20 ms", f"{per_user_p95:.1f} ms (the question names an entity)",
         _verdict(per_user_p95, at_most=20), _from(GRAPH_COST)],
        ["agent-wide p95, one client, 1M facts: ≤ 40 ms", f"{large['agent_wide']['p95']:.1f} ms",
         _verdict(large["agent_wide"]["p95"], at_most=40), _from(GRAPH_COST)],
        [f"agent-wide recall@10 against an exact scan at 1M facts (`ef_search` {ef_search}): ≥ 0.95",
         f"{recall_1m:.3f}", _verdict(recall_1m, at_least=0.95), _from("search_latency.json")],
        ["8 clients, 10k facts: ≥ 200 searches/s",
         f"{small['per_user', 8]['per_s']:.1f} per user, {small['agent_wide', 8]['per_s']:.1f} agent-wide",
         _verdict(min(small["per_user", 8]["per_s"], small["agent_wide", 8]["per_s"]), at_least=200), quiet_from],
        ["8 clients, 1M facts: ≥ 120 searches/s",
         f"{large_8['per_user']['per_s']:.1f} per user, {large_8['agent_wide']['per_s']:.1f} agent-wide",
         _verdict(min(large_8["per_user"]["per_s"], large_8["agent_wide"]["per_s"]), at_least=120),
         _from("search_latency.json")],
        ["the web process's CPU: ≤ 6 ms a search",
         f"{small['per_user', 1]['web']:.1f} ms at 10k, {large['per_user']['web']:.1f} at 1M (per user, one client)",
         _verdict(max(small["per_user", 1]["web"], large["per_user"]["web"]), at_most=6),
         f"{quiet_from}; {_from(GRAPH_COST)}"],
        ["PostgreSQL's CPU at 1M facts: ≤ 5 ms a search", f"{large['per_user']['postgres']:.1f} ms (per user)",
         _verdict(large["per_user"]["postgres"], at_most=5), _from(GRAPH_COST)],
        ["the graph signal adds to per-user p50, one client: ≤ 3 ms at 10k facts", f"{graph_adds['10000']:+.1f} ms",
         _verdict(graph_adds["10000"], at_most=3), _from(GRAPH_COST)],
        ["the same at 1M facts: ≤ 5 ms", f"{graph_adds['1000000']:+.1f} ms",
         _verdict(graph_adds["1000000"], at_most=5), _from(GRAPH_COST)],
        ["a web process's resident memory: ≤ 450 MB", f"{web_process_mb:.0f} MB",
         _verdict(web_process_mb, at_most=450), quiet_from],
    ]  # fmt: skip
    return [
        "## Fact search: how fast it is",
        "",
        _prose(
            "Hybrid fact search through the HTTP API (the Python client, gunicorn with 2 processes of 4 threads), "
            "the query embedded by the server, the top 10; per user: the user's facts and the agent-wide ones; "
            "agent-wide: the agent's shared facts. CPU is per search, from /proc. The rows at 1M facts with 8 "
            "clients and the turn rows are the last runs at that size on a quiet machine, of code that has since "
            "become cheaper per search."
        ),
        "",
        *_table(SEARCH_HEADER, rows),
        "",
        *_table(["goal", "now", "verdict", "from"], goals),
        "",
        "![fact search latency and agent-wide recall by store size](search_latency.png)",
        "",
        "The plot: `search_latency.json`, drawn by `python -m benchmarks.plots`.",
    ]


def locomo_retrieval() -> list[str]:
    runs = {split: _run(f"locomo_{split}_graph_turns.json") for split in ("eval", "dev")}
    rows = []
    for split, run in runs.items():
        for key, table in run["recall"].items():
            corpus, mode = key.split("/")
            rows.append([split, corpus, mode, *(f"{table['overall'][k]:.1f}" for k in KS)])
    paper = runs["eval"]["paper_dragon"]["overall"]
    rows += [["(paper)", corpus, "DRAGON", *(f"{paper[corpus]['overall'][k]:.1f}" for k in KS)]
             for corpus in ("turns", "observations")]  # fmt: skip
    eval_recall = runs["eval"]["recall"]
    categories = [
        [corpus, *(f"{eval_recall[f'{corpus}/hybrid'][category]['10']:.1f}" for category in CATEGORIES),
         f"{eval_recall[f'{corpus}/hybrid']['overall']['10']:.1f}"]
        for corpus in ("turns", "observations")
    ]  # fmt: skip

    def at_10(corpus: str, category: str = "overall") -> float:
        return eval_recall[f"{corpus}/hybrid"][category]["10"]

    goals = [
        [f"{corpus} ≥ {goal}" if category == "overall" else f"{category} on {corpus} ≥ {goal}",
         f"{at_10(corpus, category):.1f}", _verdict(at_10(corpus, category), at_least=goal)]
        for corpus, category, goal in (
            ("turns", "overall", 78), ("observations", "overall", 68), ("turns", "temporal", 85),
            ("turns", "multi-hop", 48), ("observations", "multi-hop", 55),
        )
    ]  # fmt: skip
    when = "; ".join(f"{split}: {_when(run)}" for split, run in runs.items())
    return [
        "## LoCoMo: retrieval recall",
        "",
        _prose(
            "LoCoMo's conversations imported as they are (turns as messages, its observations as facts), every "
            "question asked through the HTTP API at the product's defaults; recall@k is the share of a question's "
            "evidence turns found in the top k. Only the dev split was ever tuned on; the eval split is reported. "
            f"Recall does not depend on the load. Measured {when}; from "
            f"{_from(*(f'locomo_{split}_graph_turns.json' for split in runs))}."
        ),
        "",
        *_table(["split", "corpus", "mode", "R@5", "R@10", "R@25", "R@50"], rows),
        "",
        "Eval split, hybrid, recall@10 per category:",
        "",
        *_table(["corpus", *CATEGORIES, "overall"], categories),
        "",
        *_table(["goal: eval split, hybrid, recall@10", "now", "verdict"], goals),
    ]


def mem0_side_by_side() -> list[str]:
    rows = []
    for split, name in (("dev", "locomo_dev_mem0.json"), ("eval", "locomo_eval.json")):
        run = _run(name)
        ours, mem0 = run["recall"]["observations/hybrid"]["overall"], run["mem0"]["recall"]["overall"]
        rows.append([split, "this service (hybrid, over HTTP)", *(f"{ours[k]:.1f}" for k in KS), _when(run),
                     _from(name)])  # fmt: skip
        rows.append([split, "mem0 2.2.1 (in-process)", *(f"{mem0[k]:.1f}" for k in KS), "the same run", ""])
    dev = _run("locomo_dev_mem0.json")
    http, in_process = dev["latency_http_ms"]["observations/hybrid"], dev["mem0"]["latency_in_process_ms"]
    goals = [
        ["our p95 over HTTP ≤ 0.4 of mem0's in-process p95 (dev split)",
         f"{http['p95_ms']:.1f} against {in_process['p95_ms']:.1f} ms ({http['p95_ms'] / in_process['p95_ms']:.2f}); "
         f"p50 {http['p50_ms']:.1f} against {in_process['p50_ms']:.1f}",
         "not shown: mem0's own store failed searches in this run (history.md)", _from("locomo_dev_mem0.json")],
    ]  # fmt: skip
    return [
        "## Side by side with mem0",
        "",
        _prose(
            "mem0 with the same embedding model, on the same PostgreSQL server, given the same LoCoMo observations, "
            "in the same run; recall@k of the evidence over observations."
        ),
        "",
        *_table(["split", "search", "R@5", "R@10", "R@25", "R@50", "measured", "from"], rows),
        "",
        *_table(["goal", "now", "verdict", "from"], goals),
    ]


def locomo_end_to_end() -> list[str]:
    names = (
        "locomo_end_to_end_offline_dev.json",
        "locomo_end_to_end_offline_eval.json",
        "locomo_end_to_end_local_dev.json",
    )
    runs = {name: _run(name) for name in names}
    rows = []
    for name, run in runs.items():
        sessions = (
            f", first {run['sessions_per_conversation']} sessions of each" if run["sessions_per_conversation"] else ""
        )
        memory, audit, overall = run["memory"], run["junk_audit"], run["recall"]["overall"]
        rows.append([
            f"{run['provider']} ({run['model']}), {run['split']}{sessions}", run["questions"],
            *(f"{overall[k]:.1f}" for k in KS), memory["facts_current"], memory["facts_per_session"],
            f"{audit['junk_percent']}%", f"{audit['restates_other_fact_percent']}%",
            memory["seconds_per_session_mean"], _when(run), _from(name),
        ])  # fmt: skip
    offline_dev, offline_eval = runs[names[0]], runs[names[1]]
    eval_at_10 = offline_eval["recall"]["overall"]["10"]
    junk = {split: run["junk_audit"]["junk_percent"] for split, run in (("dev", offline_dev), ("eval", offline_eval))}
    goals = [
        ["the offline extractor, eval split: recall@10 ≥ 45", f"{eval_at_10:.1f}", _verdict(eval_at_10, at_least=45)],
        ["junk < 5% of the facts formed, by the audit (`benchmarks/fact_audit.py`)",
         f"dev {junk['dev']}%, eval {junk['eval']}%", _verdict(max(junk.values()), at_most=5) + "; a reader finds "
         "about 12% (history.md)"],
    ]  # fmt: skip
    return [
        "## LoCoMo end to end: the memory the service forms",
        "",
        _prose(
            "The service forms its own memory from LoCoMo's raw conversations (posted through the API, formed by "
            "`make run`'s workers), and the questions search it: recall@k of the evidence turns among the facts' "
            "sources. The facts, the share the junk audit flags (restatements of an earlier fact among them) and the "
            "seconds a session takes to form."
        ),
        "",
        *_table(END_TO_END_HEADER, rows),
        "",
        *_table(["goal", "now", "verdict"], goals),
    ]


def ingestion_and_formation() -> list[str]:
    ingestion = _run("ingestion_formation.json")
    overhead = _run("ingestion_formation_formation.json")
    scale = _run("formation_scale.json")
    rate = {name.split("_")[1]: cell["messages_per_s_median"] for name, cell in ingestion["ingestion"].items()}
    job = overhead["formation"]["job_p50_ms_median"]
    summary, settings = scale["summary"], scale["settings"]
    per_minute = summary["sessions_per_minute_median"]
    stub = (
        f"stub LLM: {settings['latency_median']} s median, {settings['latency_p95']} s p95, "
        f"{settings['rate_429']:.0%} 429, {settings['rate_500']:.0%} 500"
    )
    mistakes = (summary["facts_lost"], summary["facts_stored_twice"], summary["messages_formed_twice"])
    loads = [run["load_average_at_start"] for run in scale["runs"]]
    scale_when = (
        f"{scale['machine']['date'][:16].replace('T', ' ')} UTC, {len(loads)} runs, "
        f"load {min(loads):.1f} to {max(loads):.1f}"
    )
    rows = [
        ["ingestion through the batch endpoint, 1 client: ≥ 2,000 messages/s", f"{rate['1']:,.0f}",
         _verdict(rate["1"], at_least=2000), _when(ingestion), _from("ingestion_formation.json")],
        ["the same, 4 clients", f"{rate['4']:,.0f}", _verdict(rate["4"], at_least=2000), _when(ingestion),
         _from("ingestion_formation.json")],
        ["formation's overhead without LLM time, per 20-message session (the job's p50): ≤ 50 ms",
         f"{job:.1f} ms (the backlog drains at {overhead['formation']['drain_ms_per_session_median']:.0f} ms a "
         "session)", _verdict(job, at_most=50), _when(overhead), _from("ingestion_formation_formation.json")],
        [f"20-message sessions formed a minute, `make run`'s workers, {stub}: ≥ 600", f"{per_minute:.0f} "
         f"(runs: {', '.join(f'{runs:.0f}' for runs in summary['sessions_per_minute_runs'])})",
         _verdict(per_minute, at_least=600), scale_when, _from("formation_scale.json")],
        ["facts lost, facts stored twice, messages formed twice: 0", " / ".join(map(str, mistakes)),
         _verdict(max(mistakes), at_most=0), scale_when, _from("formation_scale.json")],
        ["append p95 while a formation backlog drains: at most +50%",
         f"{summary['append_p95_change_percent']:+.0f}% ({summary['append_p95_ms_alone_median']:.0f} → "
         f"{summary['append_p95_ms_with_formation_median']:.0f} ms)",
         _verdict(summary["append_p95_change_percent"], at_most=50), scale_when, _from("formation_scale.json")],
        ["search p95 while a formation backlog drains: at most +50%",
         f"{summary['search_p95_change_percent']:+.0f}% ({summary['search_p95_ms_alone_median']:.0f} → "
         f"{summary['search_p95_ms_with_formation_median']:.0f} ms)",
         _verdict(summary["search_p95_change_percent"], at_most=50), scale_when, _from("formation_scale.json")],
    ]  # fmt: skip
    return [
        "## Ingestion and formation",
        "",
        *_table(["goal", "now", "verdict", "measured", "from"], rows),
    ]


def interfaces_and_parts() -> list[str]:
    mcp = [_run(name) for name in MCP]
    rest = _median(run["summary"]["rest"]["p50_ms"] for run in mcp)
    over_mcp = _median(run["summary"]["mcp-http"]["p50_ms"] for run in mcp)
    extra = _median(run["summary"]["mcp-minus-rest"]["p50_ms"] for run in mcp)
    metrics = _run("metrics_overhead.json")
    encoder = _run("query_encoder.json")
    fp32, served = encoder["candidates"]["fp32"], encoder["candidates"]["int8-blockwise-128 (served)"]
    cosine = served["cosine_questions"]["min"]
    encoder_when = (
        f"{QUERY_ENCODER_MEASURED}, load {encoder['load_average_start'][0]:.1f} to {encoder['load_average_end'][0]:.1f}"
    )
    rows = [
        ["a fact search through MCP over HTTP costs ≤ 5 ms p50 more than through REST",
         f"{extra:+.1f} ms (REST {rest:.1f}, MCP {over_mcp:.1f} ms p50; medians of the runs)",
         _verdict(extra, at_most=5), _when(*mcp), "`mcp_after_{3,4,5}.json`"],
        ["search p50 with the Prometheus metrics on, against off: at most +1 ms",
         f"{metrics['p50_difference_ms']:+.2f} ms ({metrics['on']['p50_ms']:.2f} against "
         f"{metrics['off']['p50_ms']:.2f}); recording one search's metrics alone: "
         f"{metrics['recording_us_per_search']:.0f} µs",
         _verdict(metrics["p50_difference_ms"], at_most=1), _when(metrics), _from("metrics_overhead.json")],
        ["the served 8-bit query encoder's vectors against fp32's: cosine ≥ 0.998 on every LoCoMo dev question",
         f"min {cosine:.4f}; {served['timing']['cpu_ms']:.2f} ms of CPU a query against fp32's "
         f"{fp32['timing']['cpu_ms']:.2f} (×{served['timing']['cpu_ratio']:.2f})",
         _verdict(cosine, at_least=0.998), encoder_when, _from("query_encoder.json")],
    ]  # fmt: skip
    return [
        "## MCP, metrics and the query encoder",
        "",
        *_table(["goal", "now", "verdict", "measured", "from"], rows),
    ]


def current_page() -> str:
    """docs/benchmarks/index.md as the result files give it now."""
    sections = [fact_search(), locomo_retrieval(), mem0_side_by_side(), locomo_end_to_end(),
                ingestion_and_formation(), interfaces_and_parts()]  # fmt: skip
    head = [
        "# Benchmarks: the figures today",
        "",
        _prose(
            "Written by `python -m benchmarks.report` from the result files under `benchmarks/results/` that its "
            "manifest names; not edited by hand (a test fails when this page and the files disagree). How each "
            "figure is measured and reproduced: [method.md](method.md). The dated runs behind these figures, and "
            "every earlier one with its before and after: [history.md](history.md)."
        ),
        "",
        _prose(
            "One 2-core AMD EPYC virtual machine with 24 GB, shared with other jobs: a latency depends on the load "
            "during its run (the load average at its start is given), recall does not."
        ),
        "",
    ]
    tail = [
        "## LLM-judged answers (J)",
        "",
        _prose(
            "No figure: `python -m benchmarks.locomo_qa` gives J for anyone with an OpenAI-compatible endpoint "
            "([method.md](method.md#llm-judged-answers-on-locomo-j))."
        ),
        "",
    ]
    files = [
        "## The result files",
        "",
        _prose(
            "Under `benchmarks/results/`, named by the manifest of `benchmarks/report.py`; the other files there back "
            "the tables of [history.md](history.md)."
        ),
        "",
        *(textwrap.fill(f"- `{name}`: {backs}", width=120, subsequent_indent="  ") for name, backs in CURRENT.items()),
        "",
    ]
    body = [line for section in sections for line in (*section, "")]
    return "\n".join(head + body + tail + files)


def main(argv: list[str] | None = None) -> int:
    from benchmarks.lib import tables

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare docs/benchmarks/index.md, do not write it")
    commands = parser.add_subparsers(dest="command")
    printed = commands.add_parser("tables", help="print the full tables of past runs (all sections by default)")
    printed.add_argument("sections", nargs="*", metavar="SECTION", help=", ".join(tables.SECTIONS))
    arguments = parser.parse_args(argv)
    if arguments.command == "tables":
        unknown = set(arguments.sections) - set(tables.SECTIONS)
        if unknown:
            parser.error(f"no such section: {', '.join(sorted(unknown))} (sections: {', '.join(tables.SECTIONS)})")
        for name in arguments.sections or tables.SECTIONS:
            tables.SECTIONS[name]()
        return 0
    page = current_page()
    if arguments.check:
        if PAGE.read_text() != page:
            print(f"{PAGE.relative_to(REPO_DIR)} is not what the result files give: run python -m benchmarks.report")
            return 1
        return 0
    PAGE.write_text(page)
    print(f"wrote {PAGE.relative_to(REPO_DIR)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
