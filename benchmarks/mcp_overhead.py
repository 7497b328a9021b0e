"""What a fact search costs through MCP over Streamable HTTP, against the same search through REST, in the same run.

    .venv/bin/python benchmarks/mcp_overhead.py                      # 5 rounds of 200 searches each way
    .venv/bin/python benchmarks/mcp_overhead.py --rounds 7 --searches 300

One throwaway stack (benchmarks/stack.py) with one agent, one user and FACTS facts, and two web servers side by side
on the same database: the service's ASGI application under uvicorn (what `make run` and docker-compose.yml serve:
REST and /mcp in one process) and the WSGI application under gunicorn (what served REST before /mcp existed). Each
round runs, one after the other and in a rotating order, SEARCHES searches of:
- `rest-asgi`: POST /api/v1/memory/search on uvicorn, with a keep-alive HTTP client (httpx);
- `mcp-http`: tools/call search_memory on uvicorn's /mcp, with the mcp SDK's client over one open connection;
- `rest-wsgi`: POST /api/v1/memory/search on gunicorn (one worker, 4 threads, the same keep-alive client).
Every call is the same query family and top_k 5, one at a time (concurrency 1: latency, not throughput). Prints
per-round p50/p95 and the median over rounds, the MCP overhead (mcp-http p50 minus rest-asgi p50) and the ASGI cost
(rest-asgi minus rest-wsgi), with the machine's load average before and after; writes
benchmarks/results/mcp_overhead.json."""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio
import httpx

REPO_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_DIR))
sys.path.insert(0, str(REPO_DIR / "clients" / "python"))

from memory_client import MemoryClient  # noqa: E402

from benchmarks.stack import RESULTS_DIR, _wait_until_answering, machine, percentile, throwaway_stack  # noqa: E402
from memory_project.devstack import free_port, wait_for_port  # noqa: E402

USER = "bench-user"
SUBJECTS = ["coffee", "hiking", "birthday", "sister", "dentist", "Lisbon", "guitar", "allergy", "car", "garden"]
VERBS = ["likes", "visited", "booked", "forgot", "planned", "bought", "mentioned", "prefers", "sold", "painted"]


def _facts(count: int, rng: random.Random) -> list[str]:
    return [
        f"The user {rng.choice(VERBS)} the {rng.choice(SUBJECTS)} thing number {index} in {2000 + index % 25}."
        for index in range(count)
    ]


def _queries(count: int, rng: random.Random) -> list[str]:
    return [f"What about the {rng.choice(SUBJECTS)} the user {rng.choice(VERBS)}?" for _ in range(count)]


def _start_uvicorn(stack) -> str:
    port = free_port()
    command = [
        sys.executable, "-m", "uvicorn", "memory_project.asgi:application", "--host", "127.0.0.1", "--port",
        str(port), "--lifespan", "on", "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip
    stack.processes.start("web-asgi", command, env=stack.env)
    wait_for_port(port, timeout=60)
    _wait_until_answering(f"http://127.0.0.1:{port}/health/", timeout=60)
    return f"http://127.0.0.1:{port}"


def _start_gunicorn(stack) -> str:
    port = free_port()
    command = [
        sys.executable, "-m", "gunicorn", "memory_project.wsgi:application", "--bind", f"127.0.0.1:{port}",
        "--workers", "1", "--threads", "4", "--log-level", "warning", "--timeout", "120",
    ]  # fmt: skip
    stack.processes.start("web-wsgi", command, env=stack.env)
    wait_for_port(port, timeout=60)
    _wait_until_answering(f"http://127.0.0.1:{port}/health/", timeout=60)
    return f"http://127.0.0.1:{port}"


def _rest_timings(base_url: str, key: str, queries: list[str]) -> list[float]:
    timings = []
    with httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
        for query in queries:
            started = time.perf_counter()
            response = http.post("/api/v1/memory/search", json={"query": query, "user": USER, "top_k": 5})
            timings.append((time.perf_counter() - started) * 1000)
            response.raise_for_status()
    return timings


def _mcp_timings(base_url: str, key: str, queries: list[str]) -> list[float]:
    from mcp.client import Client  # the MCP SDK, loaded only where this benchmark uses it
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def run() -> list[float]:
        timings = []
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}", "X-Memory-User": USER})
        async with http, Client(streamable_http_client(f"{base_url}/mcp", http_client=http)) as client:
            for query in queries:
                started = time.perf_counter()
                result = await client.call_tool("search_memory", {"query": query, "top_k": 5})
                timings.append((time.perf_counter() - started) * 1000)
                if result.is_error:
                    raise RuntimeError(result.content)
        return timings

    return anyio.run(run)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--facts", type=int, default=200)
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--output", default="mcp_overhead.json")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    load_before = os.getloadavg()
    with throwaway_stack() as stack:
        key = stack.api_key("bench-agent")
        asgi_url = _start_uvicorn(stack)
        wsgi_url = _start_gunicorn(stack)
        client = MemoryClient(asgi_url, key, timeout=120)
        for content in _facts(args.facts, rng):
            client.fact_create(content=content, user=USER)
        runners = {
            "rest-asgi": lambda queries: _rest_timings(asgi_url, key, queries),
            "mcp-http": lambda queries: _mcp_timings(asgi_url, key, queries),
            "rest-wsgi": lambda queries: _rest_timings(wsgi_url, key, queries),
        }
        for runner in runners.values():  # warm-up: embedding sessions, connections, code paths
            runner(_queries(20, rng))
        rounds: dict[str, list[dict[str, float]]] = {name: [] for name in runners}
        names = list(runners)
        for number in range(args.rounds):
            queries = _queries(args.searches, rng)
            for name in names[number % len(names) :] + names[: number % len(names)]:
                timings = runners[name](queries)
                rounds[name].append({"p50": percentile(timings, 50), "p95": percentile(timings, 95)})
            print(
                f"round {number + 1}: " + ", ".join(f"{name} p50 {rounds[name][-1]['p50']:.2f} ms" for name in names),
                flush=True,
            )
    load_after = os.getloadavg()
    summary = {
        name: {
            "p50_ms": statistics.median(entry["p50"] for entry in entries),
            "p95_ms": statistics.median(entry["p95"] for entry in entries),
        }
        for name, entries in rounds.items()
    }
    summary["mcp_overhead_p50_ms"] = summary["mcp-http"]["p50_ms"] - summary["rest-asgi"]["p50_ms"]
    summary["asgi_cost_p50_ms"] = summary["rest-asgi"]["p50_ms"] - summary["rest-wsgi"]["p50_ms"]
    report = {
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "load_average_before": load_before,
        "load_average_after": load_after,
        "arguments": vars(args),
        "rounds": rounds,
        "summary": summary,
    }
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / args.output).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({"summary": summary, "load_before": load_before, "load_after": load_after}, indent=2))


if __name__ == "__main__":
    main()
