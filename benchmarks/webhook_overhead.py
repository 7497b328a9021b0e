"""What the webhook outbox costs the request that writes: `POST /api/v1/facts` for an agent with webhook endpoints that
want `fact.created` against the same request for an agent without any, in the same run, through HTTP, on one server.

    .venv/bin/python -m benchmarks.webhook_overhead [--rounds 9] [--writes 120] [--endpoints 1 3] [--output NAME]

One throwaway stack (benchmarks/lib/stack.py): agents with 0, 1 and 3 endpoints (`--endpoints`), one gunicorn server of
one process and two threads. Each round sends `--writes` fact writes per agent, the agents taking turns request by
request (the order rotating each round), each write a new fact (embedded in the request, as the API does). With an
endpoint, the request also writes the event row in its transaction (webhooks/services/events.py), whose commit
notifies PostgreSQL's webhook_events channel; no worker listens, so nothing else runs meanwhile. Prints the median over
rounds of each agent's p50 and p95 and the differences with no endpoint, then the outbox's own cost timed in-process
(the event written in a transaction that commits, against the same transaction without an endpoint); writes
benchmarks/results/webhook_overhead.json (or `--output`)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

from benchmarks.lib.http import timed_post
from benchmarks.lib.stack import RESULTS_DIR, machine, percentile, throwaway_stack

SUBJECTS = ["sailing", "birthday", "allergy", "garden", "violin", "marathon", "Lisbon", "night shift", "sister", "dog"]


def _write(base_url: str, key: str, content: str) -> float:
    payload = {"user": "gene", "content": content}
    return timed_post(base_url=base_url, key=key, path="/api/v1/facts", payload=payload, expected_status=201)[0]


def outbox_microseconds(*, agents: dict[str, int], repeats: int = 400) -> dict[str, float]:
    """p50 (µs) of one transaction that records a fact.created event (and commits, running the on-commit handoff),
    per agent: the difference with the agent without endpoints is the outbox's own cost."""
    from django.db import transaction

    from webhooks.services.events import webhook_event_record

    timings: dict[str, list[float]] = {name: [] for name in agents}
    for index in range(repeats):
        for name, agent_id in agents.items():
            started = time.perf_counter()
            with transaction.atomic():
                webhook_event_record(agent_id=agent_id, event_type="fact.created", data={"fact": {"id": index}})
            timings[name].append((time.perf_counter() - started) * 1e6)
    return {name: round(percentile(values, 50), 1) for name, values in timings.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--writes", type=int, default=120)
    parser.add_argument("--endpoints", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--output", default="webhook_overhead.json", help="the results file's name, under results/")
    args = parser.parse_args()

    with throwaway_stack() as stack:
        import django

        os.environ.update(stack.env)
        django.setup()
        from agents.models import Agent
        from agents.services.api_keys import api_key_create
        from webhooks.services.endpoints import webhook_endpoint_create

        keys, agent_ids = {}, {}
        for count in (0, *args.endpoints):
            name = f"{count} endpoint" + ("s" if count != 1 else "")
            agent = Agent.objects.create(external_id=f"hooks-{count}")
            for n in range(count):
                webhook_endpoint_create(agent=agent, url=f"http://127.0.0.1:9/hook-{n}", event_types=["fact.created"])
            keys[name], agent_ids[name] = api_key_create(agent=agent, name="overhead")[1], agent.pk
        base_url = stack.start_web(workers=1, threads=2)
        names = list(keys)
        for name in names:  # warm-up: the model loaded, connections open, caches filled
            for index in range(20):
                _write(base_url, keys[name], f"Gene's warm-up note {index} about {SUBJECTS[index % 10]}")

        load_before = os.getloadavg()
        rounds: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
        for round_index in range(args.rounds):
            order = names[round_index % len(names) :] + names[: round_index % len(names)]
            latencies: dict[str, list[float]] = {name: [] for name in names}
            for index in range(args.writes):
                for name in order:
                    content = f"Gene's note {round_index}-{index} about {SUBJECTS[index % 10]}: {index * 7}"
                    latencies[name].append(_write(base_url, keys[name], content))
            for name in names:
                rounds[name].append((percentile(latencies[name], 50), percentile(latencies[name], 95)))
            print(f"  round {round_index + 1}: " + ", ".join(
                f"{name} p50 {rounds[name][-1][0]:.2f} ms" for name in names
            ), flush=True)  # fmt: skip
        load_after = os.getloadavg()
        in_process = outbox_microseconds(agents=agent_ids)

    baseline = names[0]
    result: dict = {
        name: {
            "p50_ms": round(statistics.median(p50 for p50, _ in runs), 3),
            "p95_ms": round(statistics.median(p95 for _, p95 in runs), 3),
            "round_p50s_ms": [round(p50, 3) for p50, _ in runs],
        }
        for name, runs in rounds.items()
    }
    for name in names[1:]:
        result[name]["p50_difference_ms"] = round(result[name]["p50_ms"] - result[baseline]["p50_ms"], 3)
        result[name]["p95_difference_ms"] = round(result[name]["p95_ms"] - result[baseline]["p95_ms"], 3)
        # The same difference round by round (each round's agents shared its conditions): its median and spread.
        paired = [hooked - plain for (hooked, _), (plain, _) in zip(rounds[name], rounds[baseline], strict=True)]
        result[name]["paired_p50_differences_ms"] = [round(value, 3) for value in paired]
        result[name]["paired_p50_difference_median_ms"] = round(statistics.median(paired), 3)
    result["outbox_in_process_p50_us"] = in_process
    result["load_average_before"], result["load_average_after"] = load_before, load_after
    result["rounds"], result["writes_per_round_per_agent"] = args.rounds, args.writes
    result["machine"] = machine()
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / args.output).write_text(json.dumps(result, indent=2) + "\n")

    print(f"POST /api/v1/facts over HTTP, {args.rounds} rounds of {args.writes} writes per agent")
    for name in names:
        line = f"  {name:12}: p50 {result[name]['p50_ms']:.2f} ms, p95 {result[name]['p95_ms']:.2f} ms"
        if name != baseline:
            figures = result[name]
            line += (
                f"  (vs none: p50 {figures['p50_difference_ms']:+.2f} ms, paired median "
                f"{figures['paired_p50_difference_median_ms']:+.2f} ms, p95 {figures['p95_difference_ms']:+.2f} ms)"
            )
        print(line)
    print(f"  the outbox alone, in-process, p50 per committed transaction (µs): {in_process}")
    print(f"  load average (1, 5, 15 min) before {load_before}, after {load_after}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
