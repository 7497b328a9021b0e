"""What the query-independent lookups of a search cost, read from PostgreSQL each time or from the per-process caches
(core/runtime/request_path_cache.py) after one Redis read of the shared generation, in this process, against a
throwaway stack (embedded PostgreSQL and Redis on this machine).

    .venv/bin/python -m benchmarks.request_path_lookups --rounds 5 --lookups 2000

Per round, both ways alternately, `--lookups` request-path lookups each (authenticate the key, resolve the end
user, read the active embedding space, as one search does), timed by wall clock and by this process's CPU time
(PostgreSQL's and Redis's own CPU are not counted here: benchmarks/search_latency.py counts them per search).
Prints the medians over rounds of microseconds per lookup set, and the ratio."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from benchmarks.lib.stack import machine, throwaway_stack


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--lookups", type=int, default=2000)
    args = parser.parse_args()
    with throwaway_stack() as stack:
        import django

        os.environ.update(stack.env)
        django.setup()
        from django.conf import settings

        from agents.models import Agent, EndUser
        from agents.services.api_keys import api_key_authenticate, api_key_create
        from conversations.selectors.memory_scope import memory_scope_resolve
        from core.embeddings.spaces import embedding_space_active_for_reads
        from core.runtime.request_path_cache import request_path_generation_pinned

        agent = Agent.objects.create(external_id="lookups")
        EndUser.objects.create(agent=agent, external_id="gene")
        _, raw_key = api_key_create(agent=agent)

        def one_request() -> None:
            with request_path_generation_pinned():
                api_key = api_key_authenticate(raw_key=raw_key)
                memory_scope_resolve(agent=api_key.agent, user_external_id="gene", session_external_id=None)
                embedding_space_active_for_reads()

        def timed(cache_seconds: int) -> tuple[float, float]:
            settings.REQUEST_PATH_CACHE_SECONDS = cache_seconds
            one_request()
            wall, cpu = time.perf_counter(), time.process_time()
            for _ in range(args.lookups):
                one_request()
            return (
                1e6 * (time.perf_counter() - wall) / args.lookups,
                1e6 * (time.process_time() - cpu) / args.lookups,
            )

        runs: dict[str, list[tuple[float, float]]] = {"database": [], "cached": []}
        for _ in range(args.rounds):
            runs["database"].append(timed(0))
            runs["cached"].append(timed(60))
        result = {
            way: {
                "wall_us": round(statistics.median(wall for wall, _ in figures), 1),
                "cpu_us": round(statistics.median(cpu for _, cpu in figures), 1),
            }
            for way, figures in runs.items()
        }
        result["cpu_ratio"] = round(result["cached"]["cpu_us"] / result["database"]["cpu_us"], 3)
        result["machine"] = machine()
        print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
