"""What the rerank step costs a search besides the reranker's own time: `POST /api/v1/memory/search` for an agent whose
reranker is a rerank server against the same search for an agent with reranking off, through HTTP, on one server.

    .venv/bin/python -m benchmarks.rerank_overhead [--rounds 7] [--searches 60] [--facts 300] [--output NAME]

One throwaway stack (benchmarks/lib/stack.py) and one gunicorn server of one process and two threads; the rerank
server is the tests' local one (tests/rerank_server_support.py: word overlap, Cohere's shape) in a process of its
own, on the same machine, so its scoring (microseconds) stands in for a model's and what is measured is the step:
the passages' request and reply over HTTP with a kept-alive connection, their parsing and the reordering, plus the
deeper fused list it reads (RERANK_TOP_N of them rather than top_k). Two agents hold the same `--facts` facts of one
user; each round sends `--searches` questions per agent, the agents taking turns. Prints the median over rounds of
each agent's p50 and p95, the difference, and the p50 of the Server-Timing stage `rerank`; writes
benchmarks/results/rerank_overhead.json (or `--output`). A real cross-encoder adds its inference on top: see
docs/operations/runbook.md "Run a reranker" for what that is on CPU and GPU."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from benchmarks.lib.http import timed_post
from benchmarks.lib.stack import RESULTS_DIR, free_port, machine, percentile, throwaway_stack, wait_until_answering

SUBJECTS = ["sailing", "birthday", "allergy", "garden", "violin", "marathon", "Lisbon", "night shift", "sister", "dog"]
QUESTIONS = [
    "What does Gene do on weekends?",
    "Where did Gene travel last year?",
    "Which instrument does Gene play?",
    "What is Gene allergic to?",
    "When is Gene's sister's birthday?",
    "What did Gene plant in the garden?",
]


def _search(base_url: str, key: str, query: str) -> tuple[float, float | None]:
    """The client's latency (ms) and the Server-Timing stage `rerank` (ms) when the search recorded it."""
    payload = {"user": "gene", "query": query, "top_k": 10}
    elapsed, timing = timed_post(
        base_url=base_url, key=key, path="/api/v1/memory/search", payload=payload, expected_status=200
    )
    stages = dict(part.strip().split(";dur=") for part in timing.split(",") if ";dur=" in part)
    return elapsed, float(stages["rerank"]) if "rerank" in stages else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--searches", type=int, default=60)
    parser.add_argument("--facts", type=int, default=300)
    parser.add_argument("--output", default="rerank_overhead.json", help="the results file's name, under results/")
    args = parser.parse_args()

    port = free_port()
    reranker = subprocess.Popen([sys.executable, "-m", "tests.rerank_server_support", "--port", str(port)])
    rerank_env = {"RERANK_URL": f"http://127.0.0.1:{port}/v1/rerank", "RERANK_API_FORMAT": "cohere"}
    try:
        with throwaway_stack(extra_env=rerank_env) as stack:
            import django

            os.environ.update(stack.env)
            django.setup()
            from django.conf import settings

            from agents.models import Agent, EndUser
            from agents.services.api_keys import api_key_create
            from facts.services.facts import fact_create

            keys = {}
            for reranker_setting in ("off", "http"):
                agent = Agent.objects.create(external_id=f"rerank-{reranker_setting}", reranker=reranker_setting)
                user = EndUser.objects.create(agent=agent, external_id="gene")
                for index in range(args.facts):
                    content = f"Gene mentioned {SUBJECTS[index % 10]} in note {index}, about week {index % 52}"
                    fact_create(agent=agent, user=user, scopes=["user"], content=content)
                keys[reranker_setting] = api_key_create(agent=agent, name="overhead")[1]
            base_url = stack.start_web(workers=1, threads=2)
            wait_until_answering(f"http://127.0.0.1:{port}/", timeout=30)
            names = list(keys)
            for name in names:  # warm-up: the model loaded, connections open (the reranker's too), caches filled
                for index in range(20):
                    _search(base_url, keys[name], QUESTIONS[index % len(QUESTIONS)])

            load_before = os.getloadavg()
            rounds: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
            stage: list[float] = []
            for round_index in range(args.rounds):
                order = names[round_index % 2 :] + names[: round_index % 2]
                latencies: dict[str, list[float]] = {name: [] for name in names}
                for index in range(args.searches):
                    for name in order:
                        elapsed, reranked = _search(base_url, keys[name], QUESTIONS[index % len(QUESTIONS)])
                        latencies[name].append(elapsed)
                        if reranked is not None:
                            stage.append(reranked)
                for name in names:
                    rounds[name].append((percentile(latencies[name], 50), percentile(latencies[name], 95)))
                print(f"  round {round_index + 1}: " + ", ".join(
                    f"{name} p50 {rounds[name][-1][0]:.2f} ms" for name in names
                ), flush=True)  # fmt: skip
            load_after = os.getloadavg()
            top_n = settings.RERANK_TOP_N
    finally:
        reranker.terminate()
        reranker.wait(10)

    result: dict = {
        name: {
            "p50_ms": round(statistics.median(p50 for p50, _ in runs), 3),
            "p95_ms": round(statistics.median(p95 for _, p95 in runs), 3),
            "round_p50s_ms": [round(p50, 3) for p50, _ in runs],
        }
        for name, runs in rounds.items()
    }
    paired = [on - off for (on, _), (off, _) in zip(rounds["http"], rounds["off"], strict=True)]
    result["http"]["paired_p50_differences_ms"] = [round(value, 3) for value in paired]
    result["http"]["paired_p50_difference_median_ms"] = round(statistics.median(paired), 3)
    result["http"]["p95_difference_ms"] = round(result["http"]["p95_ms"] - result["off"]["p95_ms"], 3)
    result["rerank_stage_p50_ms"] = round(percentile(stage, 50), 3)
    result["rerank_stage_p95_ms"] = round(percentile(stage, 95), 3)
    result["reranked_searches"] = len(stage)
    result["rerank_top_n"], result["facts_per_agent"] = top_n, args.facts
    result["load_average_before"], result["load_average_after"] = load_before, load_after
    result["rounds"], result["searches_per_round_per_agent"] = args.rounds, args.searches
    result["machine"] = machine()
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / args.output).write_text(json.dumps(result, indent=2) + "\n")

    print(f"POST /api/v1/memory/search over HTTP, {args.rounds} rounds of {args.searches} searches per agent")
    for name in names:
        print(f"  reranker {name:4}: p50 {result[name]['p50_ms']:.2f} ms, p95 {result[name]['p95_ms']:.2f} ms")
    print(
        f"  http against off: paired median p50 {result['http']['paired_p50_difference_median_ms']:+.2f} ms, "
        f"p95 {result['http']['p95_difference_ms']:+.2f} ms; the rerank stage p50 {result['rerank_stage_p50_ms']:.2f}"
        f" ms, p95 {result['rerank_stage_p95_ms']:.2f} ms ({len(stage)} searches, top {top_n} reranked)"
    )
    print(f"  load average (1, 5, 15 min) before {load_before}, after {load_after}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
