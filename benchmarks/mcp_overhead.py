"""What a fact search costs through MCP over Streamable HTTP, against the same search through REST, in the same run.

    .venv/bin/python -m benchmarks.mcp_overhead                      # 5 rounds of 200 searches each way
    .venv/bin/python -m benchmarks.mcp_overhead --rounds 7 --searches 300

One throwaway stack (benchmarks/lib/stack.py) with one agent, one user and FACTS facts, and the service as `make run`
and docker-compose.yml serve it: gunicorn (one worker, 4 threads) running memory_project.wsgi, REST and /mcp in one
process. Each round runs SEARCHES searches through both paths, taking turns query by query (rotating who goes
first), so that the load of a shared machine weighs on both alike:
- `rest`: POST /api/v1/memory/search, with a keep-alive HTTP client (httpx);
- `mcp-http`: tools/call search_memory on /mcp, with the mcp SDK's client over one open connection.
Every call is the same query family and top_k 5, one at a time (concurrency 1: latency, not throughput). Prints
per-round p50/p95 and the median over rounds, and the MCP overhead (mcp-http p50 minus rest p50, and the median of
the per-query differences), with the machine's load average before and after; writes
benchmarks/results/mcp_overhead.json."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import sys
import time
from datetime import UTC, datetime

import anyio
import httpx
import httpx2

from benchmarks.lib.client import MemoryClient
from benchmarks.lib.stack import RESULTS_DIR, machine, percentile, throwaway_stack, wait_until_answering
from devstack.processes import free_port, wait_for_port

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


def _start_gunicorn(stack) -> str:
    port = free_port()
    command = [
        sys.executable, "-m", "gunicorn", "memory_project.wsgi:application", "--bind", f"127.0.0.1:{port}",
        "--workers", "1", "--threads", "4", "--log-level", "warning", "--timeout", "120",
    ]  # fmt: skip
    stack.processes.start("web", command, env=stack.env)
    wait_for_port(port, timeout=60)
    wait_until_answering(f"http://127.0.0.1:{port}/health/", timeout=60)
    return f"http://127.0.0.1:{port}"


async def _measure(*, url: str, key: str, rounds: list[list[str]]) -> list[dict]:
    """Per round, each search's time through every path, the paths taking turns query by query (in a rotating
    order), so that the machine's load at any moment weighs on all of them alike. One keep-alive connection per path
    for the whole run, as a client keeps it."""
    from mcp.client import Client  # the MCP SDK, loaded only where this benchmark uses it
    from mcp.client.streamable_http import streamable_http_client

    auth = {"Authorization": f"Bearer {key}"}
    body = {"user": USER, "top_k": 5}
    async with contextlib.AsyncExitStack() as stack:
        rest = await stack.enter_async_context(httpx.AsyncClient(base_url=url, headers=auth))
        http = await stack.enter_async_context(httpx2.AsyncClient(headers=auth | {"X-Memory-User": USER}, timeout=60))
        mcp = await stack.enter_async_context(Client(streamable_http_client(f"{url}/mcp", http_client=http)))
        await mcp.list_tools()

        async def via_rest(query: str) -> None:
            response = await rest.post("/api/v1/memory/search", json=body | {"query": query}, timeout=60)
            response.raise_for_status()

        async def via_mcp(query: str) -> None:
            result = await mcp.call_tool("search_memory", {"query": query, "top_k": 5})
            if result.is_error:
                raise RuntimeError(result.content)

        paths = {"rest": via_rest, "mcp-http": via_mcp}
        names = list(paths)
        measured = []
        for queries in rounds:
            timings: dict[str, list[float]] = {name: [] for name in names}
            for index, query in enumerate(queries):
                for name in names[index % len(names) :] + names[: index % len(names)]:
                    started = time.perf_counter()
                    await paths[name](query)
                    timings[name].append((time.perf_counter() - started) * 1000)
            measured.append(timings)
        return measured


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
        url = _start_gunicorn(stack)
        client = MemoryClient(url, key, timeout=120)
        for content in _facts(args.facts, rng):
            client.fact_create(content=content, user=USER)
        warm_up = [_queries(30, rng)]
        anyio.run(lambda: _measure(url=url, key=key, rounds=warm_up))
        measured = anyio.run(
            lambda: _measure(
                url=url,
                key=key,
                rounds=[_queries(args.searches, rng) for _ in range(args.rounds)],
            )
        )
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in measured[0]}
    for number, timings in enumerate(measured, start=1):
        for name, values in timings.items():
            rounds[name].append({"p50": percentile(values, 50), "p95": percentile(values, 95)})
        paired = [mcp - rest for mcp, rest in zip(timings["mcp-http"], timings["rest"], strict=True)]
        rounds.setdefault("mcp-minus-rest", []).append({"p50": percentile(paired, 50), "p95": percentile(paired, 95)})
        print(f"round {number}: " + ", ".join(f"{name} p50 {rounds[name][-1]['p50']:.2f} ms" for name in rounds))
    load_after = os.getloadavg()
    summary = {
        name: {
            "p50_ms": statistics.median(entry["p50"] for entry in entries),
            "p95_ms": statistics.median(entry["p95"] for entry in entries),
        }
        for name, entries in rounds.items()
    }
    summary["mcp_overhead_p50_ms"] = summary["mcp-http"]["p50_ms"] - summary["rest"]["p50_ms"]
    summary["mcp_overhead_paired_p50_ms"] = summary["mcp-minus-rest"]["p50_ms"]
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
