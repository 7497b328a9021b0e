"""Ingestion throughput through the batch endpoint, and formation overhead per session without LLM time.

    .venv/bin/python -m benchmarks.ingestion_formation                    # full: 10,000 messages per run, 100 sessions
    .venv/bin/python -m benchmarks.ingestion_formation --quick            # the `make bench` version

On a throwaway stack (benchmarks/lib/stack.py, web app under gunicorn on 127.0.0.1):

1. Ingestion: sessions of 100 generated messages, each posted in one request to
   `POST /api/v1/sessions/<id>/messages` with idempotency keys, by 1 and by 4 concurrent clients (the Python
   client); messages per second = messages stored / wall time. No worker runs meanwhile: what a request does is
   store, count tokens and enqueue the embedding task (the embedding itself is background work).
2. Formation: sessions of 20 messages are stored and embedded, then formation is requested for all of them at once
   (`POST .../form`) and one Celery worker (benchmarks/lib/formation_worker.py: the product's worker with an LLM that
   answers instantly) drains the backlog. Overhead per session = drain wall time / sessions, and each job's own
   duration (started_at to finished_at of its FormationJob row) minus the LLM latency recorded for it.
Writes benchmarks/results/ingestion_formation.json."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks.lib.client import MemoryClient
from benchmarks.lib.stack import RESULTS_DIR, machine, percentile, throwaway_stack
from benchmarks.lib.synthetic_facts import FactGenerator

REPO_DIR = Path(__file__).resolve().parent.parent

AGENT = "bench-ingest"
# Formation is requested explicitly in the benchmark, never by the interval trigger while messages arrive.
STACK_ENV = {"MEMORY_FORMATION_MSG_INTERVAL": "1000000", "MEMORY_FORMATION_TOKEN_INTERVAL": "100000000"}


def conversation(generator: FactGenerator, *, session: int, n: int) -> list[dict]:
    """Alternating user and assistant turns made of the generated sentences."""
    messages = []
    for i in range(n):
        predicate = generator.predicates[(session * 131 + i * 17) % len(generator.predicates)]
        if i % 2 == 0:
            content = f"By the way, my friend {generator.user_names[(session + i) % 50]} {predicate}."
            role = "user"
        else:
            content = f"That is good to know. How do you feel about the fact that they {predicate}?"
            role = "assistant"
        messages.append({"role": role, "content": content, "idempotency_key": f"s{session}-m{i}"})
    return messages


def ingest(client_factory, generator, *, first_session: int, sessions: int, per_session: int, concurrency: int):
    payloads = [
        (f"ingest-{s}", conversation(generator, session=s, n=per_session))
        for s in range(first_session, first_session + sessions)
    ]
    clients = [client_factory() for _ in range(concurrency)]

    def post(indexed):
        index, (session, messages) = indexed
        started = time.perf_counter()
        result = clients[index % concurrency].messages_append(session, messages, user=f"user-{index % 50}")
        assert result["created_count"] == len(messages), result["created_count"]
        return time.perf_counter() - started

    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        seconds = list(pool.map(post, enumerate(payloads)))
    elapsed = time.perf_counter() - started
    total = sessions * per_session
    return {
        "messages": total,
        "requests": sessions,
        "messages_per_request": per_session,
        "concurrency": concurrency,
        "seconds": round(elapsed, 2),
        "messages_per_s": round(total / elapsed, 1),
        "request_p50_ms": round(1000 * percentile(seconds, 50), 1),
        "request_p95_ms": round(1000 * percentile(seconds, 95), 1),
    }


def wait_for(predicate, *, timeout: float, poll: float = 0.2) -> float:
    started = time.monotonic()
    while not predicate():
        if time.monotonic() - started > timeout:
            raise TimeoutError("the worker did not finish in time")
        time.sleep(poll)
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--only",
        choices=["ingestion", "formation"],
        help="run only this part (ingestion: results not written; formation: to ingestion_formation_formation.json)",
    )
    parser.add_argument("--web-workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--web-threads", type=int, default=4, help="gunicorn threads per worker (1: sync workers)")
    args = parser.parse_args()
    ingest_sessions = 40 if args.quick else 100
    formation_sessions = 40 if args.quick else 100
    repeats = 1 if args.quick else args.repeats
    generator = FactGenerator(seed=11, predicate_pool=5000)
    result: dict = {
        "benchmark": "ingestion_formation",
        "machine": machine(),
        "quick": args.quick,
        "web": {"workers": args.web_workers, "threads": args.web_threads},
    }
    with throwaway_stack(extra_env=STACK_ENV) as stack:
        key = stack.api_key(AGENT)
        base_url = stack.start_web(workers=args.web_workers, threads=args.web_threads)
        os.environ.update(stack.env)
        import django

        django.setup()
        from django.db.models import Max, Sum

        from conversations.models import Message, MessageEmbedding, Session
        from core.models import LLMCall
        from formation.models import FormationJob

        def client():
            return MemoryClient(base_url, key, timeout=120)

        # Warm-up: load the tokenizer in every web worker.
        ingest(client, generator, first_session=10_000, sessions=8, per_session=100, concurrency=4)
        runs = {1: [], 4: []}
        next_session = 0
        for _ in range(repeats if args.only != "formation" else 0):
            for concurrency in (1, 4):
                runs[concurrency].append(
                    ingest(
                        client,
                        generator,
                        first_session=next_session,
                        sessions=ingest_sessions,
                        per_session=100,
                        concurrency=concurrency,
                    )
                )
                next_session += ingest_sessions
        result["ingestion"] = {
            f"concurrency_{c}": {
                "messages_per_s_median": statistics.median(r["messages_per_s"] for r in rs),
                "runs": rs,
            }
            for c, rs in runs.items()
            if rs
        }
        for c, rs in runs.items():
            if rs:
                print(f"ingestion, {c} client(s): {statistics.median(r['messages_per_s'] for r in rs):.0f} messages/s")
        if args.only == "ingestion":
            for c, rs in runs.items():
                last = rs[-1]
                print(f"  {c} client(s): request p50 {last['request_p50_ms']} ms, p95 {last['request_p95_ms']} ms")
            return 0

        # Formation: sessions of 20 messages, embedded first so the backlog holds formation work only. The embedding
        # tasks the ingestion runs queued are dropped (this stack's own Redis): those messages are never formed here.
        import redis

        redis.Redis.from_url(stack.env["REDIS_URL"]).flushdb()
        formation_runs = []
        stack.processes.start(
            "worker",
            [
                sys.executable,
                "-m",
                "benchmarks.lib.formation_worker",
                "-Q",
                "celery,formation",  # one worker for both queues: the overhead per job, not concurrency
                "--concurrency",
                "1",
                "-l",
                "warning",
            ],
            env=stack.env,
        )
        for repeat in range(repeats):
            prefix = f"form-{repeat}-"
            chat = client()
            for s in range(formation_sessions):
                chat.messages_append(
                    f"{prefix}{s}", conversation(generator, session=50_000 + repeat * 1000 + s, n=20), user=f"u{s}"
                )
            ours_messages = Message.objects.filter(session__external_id__startswith=prefix)
            wait_for(
                lambda m=ours_messages: MessageEmbedding.objects.filter(message__in=m).count() >= m.count(),
                timeout=1800,
                poll=0.5,
            )
            jobs_before = set(FormationJob.objects.values_list("pk", flat=True))
            started = time.monotonic()
            for s in range(formation_sessions):
                chat.session_form(f"{prefix}{s}")
            ours = Session.objects.filter(external_id__startswith=prefix)
            last_message = dict(
                Message.objects.filter(session__in=ours)
                .values("session_id")
                .annotate(last=Max("id"))
                .values_list("session_id", "last")
            )

            def all_formed(ours=ours, last_message=last_message) -> bool:
                formed = ours.filter(formation_status="idle").values_list("pk", "formed_through_message_id")
                return sum(last_message[pk] == through for pk, through in formed) == formation_sessions

            wait_for(all_formed, timeout=1800)
            drain_seconds = time.monotonic() - started
            jobs = list(
                FormationJob.objects.filter(session__in=ours)
                .exclude(pk__in=jobs_before)
                .values(
                    "pk", "started_at", "finished_at", "status", "message_count", "facts_added", "reflections_added"
                )
            )
            llm_ms = dict(
                LLMCall.objects.filter(job_kind="formation", job_id__in=[j["pk"] for j in jobs])
                .values("job_id")
                .annotate(total=Sum("latency_ms"))
                .values_list("job_id", "total")
            )
            durations = [
                1000 * (j["finished_at"] - j["started_at"]).total_seconds() - llm_ms.get(j["pk"], 0)
                for j in jobs
                if j["finished_at"]
            ]
            formation_runs.append(
                {
                    "sessions": formation_sessions,
                    "messages_per_session": 20,
                    "jobs": len(jobs),
                    "failed_jobs": sum(j["status"] != "succeeded" for j in jobs),
                    "facts_added": sum(j["facts_added"] for j in jobs),
                    "reflections_added": sum(j["reflections_added"] for j in jobs),
                    "drain_seconds": round(drain_seconds, 2),
                    "drain_ms_per_session": round(1000 * drain_seconds / formation_sessions, 1),
                    "job_p50_ms": round(percentile(durations, 50), 1),
                    "job_p95_ms": round(percentile(durations, 95), 1),
                }
            )
            print(f"formation run {repeat + 1}: {formation_runs[-1]}")
        result["formation"] = {
            "drain_ms_per_session_median": statistics.median(r["drain_ms_per_session"] for r in formation_runs),
            "job_p50_ms_median": statistics.median(r["job_p50_ms"] for r in formation_runs),
            "runs": formation_runs,
        }
        result["rss_mb"] = {"web": round(stack.rss_mb("web"), 1), "worker": round(stack.rss_mb("worker"), 1)}
    if args.only:
        print(json.dumps(result["formation"], indent=1))
    else:
        print_summary(result)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    name = "ingestion_formation_quick.json" if args.quick else "ingestion_formation.json"
    if args.only:
        name = f"ingestion_formation_{args.only}.json"
    (RESULTS_DIR / name).write_text(json.dumps(result, indent=1, default=str))
    print(f"wrote {RESULTS_DIR / name}")
    return 0


def print_summary(result: dict) -> None:
    print("\nIngestion (batch endpoint, 100 messages per request)")
    print(f"  {'clients':>7} {'messages/s':>11} {'request p50 ms':>15} {'p95 ms':>8}")
    for name, cell in result["ingestion"].items():
        last = cell["runs"][-1]
        print(
            f"  {name.split('_')[1]:>7} {cell['messages_per_s_median']:11.0f} {last['request_p50_ms']:15.1f} "
            f"{last['request_p95_ms']:8.1f}"
        )
    formation = result["formation"]
    print("Formation overhead per 20-message session, instant LLM, one worker")
    print(f"  backlog drain: {formation['drain_ms_per_session_median']:.1f} ms/session (median of runs)")
    print(f"  job duration minus LLM time: p50 {formation['job_p50_ms_median']:.1f} ms")
    print(f"  RSS MB: {result['rss_mb']}")


if __name__ == "__main__":
    sys.exit(main())
