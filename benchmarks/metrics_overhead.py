"""What the metrics cost a search: search latency with metrics on (production's set-up: prometheus-client's
multiprocess mode, the metrics middleware, the embedding and LLM instruments) against METRICS_ENABLED=false, in the
same run, on the same data, through HTTP.

    .venv/bin/python -m benchmarks.metrics_overhead [--facts 2000] [--rounds 9] [--searches 100]

One throwaway stack (benchmarks/lib/stack.py) with one agent whose user has `--facts` facts; two gunicorn servers of one
process and two threads each, one with metrics on and one with them off, answer the same hybrid searches (query
embedding included: the per-process query-vector cache is off in both, so every search embeds). Rounds alternate
which server goes first; each round sends `--searches` sequential searches to each. Prints the median over rounds of
each server's p50 and p95, the difference, the time recording one search's metrics takes on its own (too small for
the difference of two servers to show), and the machine's load; writes benchmarks/results/metrics_overhead.json."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

from benchmarks.lib.http import timed_post
from benchmarks.lib.stack import RESULTS_DIR, machine, percentile, throwaway_stack
from devstack.processes import free_port, wait_for_port

REPO_DIR = Path(__file__).resolve().parent.parent

SUBJECTS = ["sailing", "birthday", "allergy", "garden", "violin", "marathon", "Lisbon", "night shift", "sister", "dog"]


def _gunicorn(stack, name: str, env: dict[str, str]) -> str:
    port = free_port()
    command = [sys.executable, "-m", "gunicorn", "memory_project.wsgi:application", "--bind", f"127.0.0.1:{port}",
               "--workers", "1", "--threads", "2", "--log-level", "warning"]  # fmt: skip
    stack.processes.start(name, command, env=stack.env | env)
    wait_for_port(port, timeout=90)
    return f"http://127.0.0.1:{port}"


def _search(base_url: str, key: str, query: str) -> float:
    payload = {"query": query, "user": "gene", "top_k": 10}
    return timed_post(base_url=base_url, key=key, path="/api/v1/memory/search", payload=payload, expected_status=200)[0]


# What a search request records, timed alone in a process of its own (multiprocess mode needs its folder set before
# prometheus_client is imported): the request's count and time, its stages and its query's embedding.
_RECORDING = """
import os, time, tempfile
os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings.test")
from core.observability import metrics as m
stages = ["text_sql", "embed", "embed_wait", "vector_sql", "hits_sql", "fuse", "serialize"]
route = "api/v1/memory/search"
def one():
    m.http_requests.labels(route, "POST", "200").inc()
    m.http_request_duration.labels(route, "POST").observe(0.02)
    for stage in stages:
        m.search_stage_duration.labels(route, stage).observe(0.002)
    m.embedding_duration.labels("local").observe(0.004)
    m.embedded_texts.labels("local").inc()
for _ in range(1000):
    one()
runs = []
for _ in range(5):
    started = time.perf_counter()
    for _ in range(20000):
        one()
    runs.append((time.perf_counter() - started) / 20000 * 1e6)
print(sorted(runs)[2])
"""


def recording_microseconds() -> float:
    """Median over five runs of the time (µs) to record one search request's metrics, in multiprocess mode."""
    import subprocess

    completed = subprocess.run(
        [sys.executable, "-c", _RECORDING], cwd=REPO_DIR, capture_output=True, text=True, check=True
    )
    return float(completed.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--facts", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--searches", type=int, default=100)
    args = parser.parse_args()

    with throwaway_stack(extra_env={"EMBEDDING_QUERY_CACHE_SIZE": "0"}) as stack:
        import django

        os.environ.update(stack.env)
        django.setup()
        from agents.models import Agent, EndUser
        from agents.services.api_keys import api_key_create
        from facts.services.facts import fact_create

        agent = Agent.objects.create(external_id="overhead")
        gene = EndUser.objects.create(agent=agent, external_id="gene")
        for index in range(args.facts):
            subject = SUBJECTS[index % len(SUBJECTS)]
            fact_create(
                agent=agent, user=gene, scopes=["user"], content=f"Gene's note {index} about {subject}: {index * 7}"
            )
        _, key = api_key_create(agent=agent, name="overhead")

        metrics_dir = stack.data_dir / "metrics-on"
        metrics_dir.mkdir()
        servers = {
            "on": _gunicorn(stack, "web-metrics-on", {"PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)}),
            "off": _gunicorn(stack, "web-metrics-off", {"METRICS_ENABLED": "false"}),
        }
        queries = [f"What did Gene say about {SUBJECTS[i % len(SUBJECTS)]} number {i}?" for i in range(args.searches)]
        for base_url in servers.values():  # warm-up: model loaded, connections open, plans cached
            for query in queries[:20]:
                _search(base_url, key, query)

        load_before = os.getloadavg()
        rounds: dict[str, list[tuple[float, float]]] = {"on": [], "off": []}
        for round_index in range(args.rounds):
            order = ["on", "off"] if round_index % 2 == 0 else ["off", "on"]
            for name in order:
                latencies = [_search(servers[name], key, query) for query in queries]
                rounds[name].append((percentile(latencies, 50), percentile(latencies, 95)))
        load_after = os.getloadavg()

    result = {
        name: {
            "p50_ms": round(statistics.median(p50 for p50, _ in runs), 3),
            "p95_ms": round(statistics.median(p95 for _, p95 in runs), 3),
            "round_p50s_ms": [round(p50, 3) for p50, _ in runs],
        }
        for name, runs in rounds.items()
    }
    result["p50_difference_ms"] = round(result["on"]["p50_ms"] - result["off"]["p50_ms"], 3)
    result["p95_difference_ms"] = round(result["on"]["p95_ms"] - result["off"]["p95_ms"], 3)
    result["recording_us_per_search"] = round(recording_microseconds(), 1)
    result["load_average_before"], result["load_average_after"] = load_before, load_after
    result["facts"], result["rounds"], result["searches_per_round"] = args.facts, args.rounds, args.searches
    result["machine"] = machine()
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / "metrics_overhead.json").write_text(json.dumps(result, indent=2) + "\n")

    print(f"search over HTTP, {args.facts} facts, {args.rounds} rounds of {args.searches} searches per server")
    for name in ("off", "on"):
        print(f"  metrics {name:3}: p50 {result[name]['p50_ms']:.2f} ms, p95 {result[name]['p95_ms']:.2f} ms")
    print(f"  on - off: p50 {result['p50_difference_ms']:+.2f} ms, p95 {result['p95_difference_ms']:+.2f} ms")
    print(f"  recording one search's metrics (multiprocess mode, alone): {result['recording_us_per_search']} µs")
    print(f"  load average (1, 5, 15 min) before {load_before}, after {load_after}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
