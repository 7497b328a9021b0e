"""Formation at production scale: sessions formed per minute against an LLM with a real provider's latency and
failures, formation's overhead besides the LLM, and what formation costs search and ingestion when both run.

    .venv/bin/python -m benchmarks.formation_scale                       # 3 repeats of 600 sessions, mixed load
    .venv/bin/python -m benchmarks.formation_scale --workers legacy --sessions 60 --mixed-seconds 0

On a throwaway stack (benchmarks/lib/stack.py: embedded PostgreSQL and Redis, migrations, the web app under gunicorn as
in production) with the LLM played by tests/llm_stub_server.py in a process of its own (log-normal latency, median 1.5 s
and p95 5 s by default, 2% of requests 429 with Retry-After 1 s, 1% 500), and the workers of `make run`
(devstack.workers.worker_commands; `--workers legacy`: the one prefork worker of two processes that make run
started before the formation queue existed), plus beat. Each repeat:

1. Throughput: `--sessions` sessions of 20 messages (`--users` users, so reconciliation and user consolidation run)
   are posted through the API; their message-embedding tasks are dropped so that the backlog is formation only; then
   formation is queued for all of them at once (as the explicit trigger does, from the benchmark's process) and the
   time until every session is formed through its last message gives sessions per minute. The database's
   connections and each process's CPU are sampled meanwhile. Lost facts: facts the stub extracted that were neither
   stored nor judged duplicates (NONE) by reconciliation; messages formed twice: jobs that covered a message again.
2. Mixed load (`--mixed-seconds`, 0 skips it): 4 clients append two turns and search, in a loop, first alone, then
   while a second backlog of the same size forms; append and search p95 are compared.

Writes benchmarks/results/<--output>."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks.lib.client import MemoryClient
from benchmarks.lib.stack import RESULTS_DIR, machine, percentile, throwaway_stack
from benchmarks.lib.synthetic_facts import FactGenerator
from devstack.processes import free_port, wait_for_port

REPO_DIR = Path(__file__).resolve().parent.parent

AGENT = "bench-formation"
MESSAGES_PER_SESSION = 20
CLIENTS = 4
# Formation is requested explicitly, never by the interval trigger while messages arrive.
STACK_ENV = {"MEMORY_FORMATION_MSG_INTERVAL": "1000000", "MEMORY_FORMATION_TOKEN_INTERVAL": "100000000"}


def conversation(generator: FactGenerator, *, session: int) -> list[dict]:
    """Alternating user and assistant turns; every user turn is a distinct statement (a number of its own)."""
    messages = []
    for i in range(MESSAGES_PER_SESSION):
        predicate = generator.predicates[(session * 131 + i * 17) % len(generator.predicates)]
        friend = generator.user_names[(session + i) % len(generator.user_names)]
        if i % 2 == 0:
            content, role = f"Note {session}-{i}: my friend {friend} {predicate}.", "user"
        else:
            content, role = f"That is good to know. How do you feel about the fact that they {predicate}?", "assistant"
        messages.append({"role": role, "content": content, "idempotency_key": f"s{session}-m{i}"})
    return messages


def start_stub(args, stack) -> subprocess.Popen:
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "tests.llm_stub_server",
        "--port",
        str(port),
        "--latency-median",
        str(args.latency_median),
        "--latency-p95",
        str(args.latency_p95),
        "--rate-429",
        str(args.rate_429),
        "--rate-500",
        str(args.rate_500),
    ]
    stub = subprocess.Popen(command, cwd=REPO_DIR, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wait_for_port(port, timeout=30)
    stack.env |= {"LLM_PROVIDER": "openai", "LLM_BASE_URL": f"http://127.0.0.1:{port}/v1", "LLM_API_KEY": "stub"}
    return stub


def start_workers(stack, *, legacy: bool) -> None:
    if legacy:
        command = [sys.executable, "-m", "celery", "-A", "memory_project", "worker", "-l", "warning"]
        stack.processes.start("worker", [*command, "--concurrency", "2"], env=stack.env)
    else:
        from devstack.workers import worker_commands

        for name, (command, env) in worker_commands(env=stack.env, log_level="warning").items():
            stack.processes.start(name, command, env=env)
    beat = [sys.executable, "-m", "celery", "-A", "memory_project", "beat", "-l", "warning"]
    stack.processes.start("beat", [*beat, "-s", str(stack.data_dir / "celerybeat-schedule")], env=stack.env)


def _cpu_seconds(pids: list[int]) -> float:
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return total


def _children(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return [pid, *map(int, found)]


def cpu_by_part(stack, stub: subprocess.Popen) -> dict[str, float]:
    """CPU seconds used so far by each part of the stack (processes and their children)."""
    parts = {name: _cpu_seconds(stack.pids(name)) for name in stack.processes.processes}
    postmaster = int((stack.data_dir / "postgres" / "postmaster.pid").read_text().split()[0])
    redis_pid = subprocess.run(["pgrep", "-f", f"--dir {stack.data_dir}/redis"], capture_output=True, text=True)
    parts["postgres"] = _cpu_seconds(_children(postmaster))
    parts["redis"] = _cpu_seconds([int(pid) for pid in redis_pid.stdout.split()])
    parts["llm_stub"] = _cpu_seconds([stub.pid])
    parts["benchmark_clients"] = _cpu_seconds([os.getpid()])
    return parts


class ConnectionSampler(threading.Thread):
    """The database's client connections (pg_stat_activity), sampled twice a second."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[int] = []
        self.stop = threading.Event()

    def run(self) -> None:
        from django.db import connection

        while not self.stop.wait(0.5):
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND backend_type = "
                    "'client backend' AND pid <> pg_backend_pid()"
                )
                self.samples.append(cursor.fetchone()[0])
        connection.close()


def post_sessions(client_factory, generator, *, prefix: str, first: int, count: int, users: int) -> list[str]:
    names = [f"{prefix}{n}" for n in range(count)]
    clients = [client_factory() for _ in range(CLIENTS)]

    def post(indexed):
        index, name = indexed
        clients[index % CLIENTS].messages_append(
            name, conversation(generator, session=first + index), user=f"{prefix}user-{index % users}"
        )

    with ThreadPoolExecutor(CLIENTS) as pool:
        list(pool.map(post, enumerate(names)))
    return names


def request_formation(names: list[str]) -> None:
    """Queue formation of the sessions as the explicit trigger does (formation_request), from this process: the
    web server's threads stay free for the client load."""
    from django.db import connection

    from conversations.models import Session
    from formation.services.formation_triggers import formation_request

    for session in Session.objects.filter(agent__external_id=AGENT, external_id__in=names).select_related("agent"):
        formation_request(session=session, trigger="explicit")
    connection.close()


def drop_embedding_tasks(stack) -> None:
    """The default queue holds the posted messages' embedding tasks: dropped, and the ones the worker had taken
    already finished, so that the backlog is formation only."""
    import redis

    redis.Redis.from_url(stack.env["REDIS_URL"]).delete("celery")
    for _ in range(60):
        before = _cpu_seconds(stack.pids("worker"))
        time.sleep(1)
        if _cpu_seconds(stack.pids("worker")) - before < 0.05:
            return


def formed_count(prefix: str) -> int:
    """Sessions idle with their cursor on their last message."""
    from django.db.models import F, Max, OuterRef, Subquery

    from conversations.models import Message, Session

    last = Message.objects.filter(session=OuterRef("pk")).values("session").annotate(m=Max("id")).values("m")
    return (
        Session.objects.filter(external_id__startswith=prefix, formation_status="idle")
        .annotate(last=Subquery(last))
        .filter(formed_through_message_id=F("last"))
        .count()
    )


def wait_formed(prefix: str, count: int, *, timeout: float) -> float:
    started = time.monotonic()
    while formed_count(prefix) < count:
        if time.monotonic() - started > timeout:
            raise TimeoutError(f"{formed_count(prefix)} of {count} sessions formed after {timeout:.0f}s")
        time.sleep(1)
    return time.monotonic() - started


def formation_figures(prefix: str, expected_facts_per_session: int) -> dict:
    from django.db.models import Count, Q, Sum

    from conversations.models import Message, Session
    from core.models import LLMCall
    from facts.models import Fact
    from formation.models import FormationJob

    sessions = Session.objects.filter(external_id__startswith=prefix)
    jobs = FormationJob.objects.filter(session__in=sessions)
    succeeded = jobs.filter(status="succeeded", message_count__gt=0)
    per_session = succeeded.values("session").annotate(
        messages=Sum("message_count"), decided=Sum("facts_added") + Sum("facts_updated") + Sum("facts_unchanged")
    )
    stored_messages = dict(
        Message.objects.filter(session__in=sessions)
        .values("session")
        .annotate(n=Count("id"))
        .values_list("session", "n")
    )
    formed_twice = sum(max(0, row["messages"] - stored_messages[row["session"]]) for row in per_session)
    lost = sum(max(0, expected_facts_per_session - row["decided"]) for row in per_session)
    lost += expected_facts_per_session * (sessions.count() - len(per_session))
    job_ids = list(jobs.values_list("pk", flat=True))
    calls = LLMCall.objects.filter(job_kind="formation", job_id__in=job_ids)
    by_purpose = dict(calls.filter(outcome="ok").values("purpose").annotate(n=Count("id")).values_list("purpose", "n"))
    outcomes = dict(calls.values("outcome").annotate(n=Count("id")).values_list("outcome", "n"))
    consolidations = LLMCall.objects.filter(
        job_kind="consolidation",
        agent__external_id=AGENT,
        outcome="ok",
        created_at__gte=sessions.earliest("started_at").started_at,
    ).count()
    durations = []
    llm_ms = dict(calls.values("job_id").annotate(total=Sum("latency_ms")).values_list("job_id", "total"))
    for job in succeeded.values("pk", "started_at", "finished_at"):
        durations.append((job["finished_at"] - job["started_at"]).total_seconds() * 1000 - (llm_ms.get(job["pk"]) or 0))
    duplicates = (
        Fact.objects.filter(agent__external_id=AGENT, valid_to__isnull=True)
        .values("user", "content")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )
    n = sessions.count()
    return {
        "sessions": n,
        "jobs": jobs.count(),
        "failed_jobs": jobs.filter(status="failed").count(),
        "llm_calls_per_session": round((sum(by_purpose.values()) + consolidations) / n, 2),
        "llm_ok_calls_by_purpose": by_purpose | {"consolidate": consolidations},
        "llm_call_outcomes": outcomes,
        "facts_expected": expected_facts_per_session * n,
        "facts_lost": lost,
        "facts_stored_twice": duplicates,
        "messages_formed_twice": formed_twice,
        "job_minus_llm_ms_p50": round(percentile(durations, 50), 1),
        "job_minus_llm_ms_p95": round(percentile(durations, 95), 1),
        "waiting_or_failed_sessions": sessions.filter(~Q(formation_status="idle")).count(),
    }


class ClientLoad:
    """CLIENTS threads, each appending two turns to its session (a new one every 20 messages) and searching."""

    def __init__(self, client_factory, prefix: str) -> None:
        self.client_factory, self.prefix = client_factory, prefix
        self.latencies: dict[str, list[float]] = {"append": [], "search": []}
        self.errors = 0
        self.lock = threading.Lock()

    def run(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        with ThreadPoolExecutor(CLIENTS) as pool:
            list(pool.map(lambda n: self._client(n, deadline), range(CLIENTS)))

    def _client(self, number: int, deadline: float) -> None:
        client, turn = self.client_factory(), 0
        while time.monotonic() < deadline:
            session = f"{self.prefix}{number}-{turn // 20}"
            messages = [
                {
                    "role": "user",
                    "content": f"Client {number} turn {turn}: I planted tomatoes today.",
                    "idempotency_key": f"{turn}",
                },
                {"role": "assistant", "content": "How many plants did you put in?", "idempotency_key": f"{turn + 1}"},
            ]
            for operation, call in (
                ("append", lambda s=session, m=messages: client.messages_append(s, m, user=f"{self.prefix}u{number}")),
                ("search", lambda: client.search(query="what did the user plant", user=f"{self.prefix}u{number}")),
            ):
                started = time.perf_counter()
                try:
                    call()
                except Exception:
                    with self.lock:
                        self.errors += 1
                    continue
                with self.lock:
                    self.latencies[operation].append(time.perf_counter() - started)
            turn += 2

    def figures(self) -> dict:
        return {
            operation: {
                "requests": len(values),
                "p50_ms": round(1000 * percentile(values, 50), 1),
                "p95_ms": round(1000 * percentile(values, 95), 1),
            }
            for operation, values in self.latencies.items()
        } | {"errors": self.errors}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=600)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", choices=["default", "legacy"], default="default")
    parser.add_argument("--latency-median", type=float, default=1.5)
    parser.add_argument("--latency-p95", type=float, default=5.0)
    parser.add_argument("--rate-429", type=float, default=0.02)
    parser.add_argument("--rate-500", type=float, default=0.01)
    parser.add_argument("--mixed-seconds", type=float, default=40.0, help="0: no mixed-load measurement")
    parser.add_argument("--timeout", type=float, default=1800.0, help="longest wait for one backlog to form")
    parser.add_argument("--output", default="formation_scale.json")
    args = parser.parse_args()
    generator = FactGenerator(seed=13, predicate_pool=5000)
    result: dict = {"benchmark": "formation_scale", "machine": machine(), "settings": vars(args), "runs": []}
    with throwaway_stack(extra_env=STACK_ENV) as stack:
        stub = start_stub(args, stack)
        try:
            key = stack.api_key(AGENT)
            base_url = stack.start_web()
            start_workers(stack, legacy=args.workers == "legacy")
            os.environ.update(stack.env)
            import django

            django.setup()

            def client():
                return MemoryClient(base_url, key, timeout=120)

            # Warm-up: the workers load the embedding model, the web processes the tokenizer and the model.
            warm = post_sessions(client, generator, prefix="warm-", first=900_000, count=8, users=8)
            request_formation(warm)
            wait_formed("warm-", len(warm), timeout=600)
            ClientLoad(client, "warm-load-").run(5)
            for repeat in range(args.repeats):
                run: dict = {"load_average_at_start": os.getloadavg()[0]}
                prefix = f"r{repeat}-"
                names = post_sessions(
                    client, generator, prefix=prefix, first=repeat * 100_000, count=args.sessions, users=args.users
                )
                drop_embedding_tasks(stack)
                sampler = ConnectionSampler()
                sampler.start()
                cpu_before = cpu_by_part(stack, stub)
                started = time.monotonic()
                request_formation(names)
                wait_formed(prefix, len(names), timeout=args.timeout)
                drain = time.monotonic() - started
                cpu_after = cpu_by_part(stack, stub)
                sampler.stop.set()
                sampler.join()
                run["cpu_ms_per_session"] = {
                    part: round(1000 * (cpu_after[part] - cpu_before[part]) / len(names), 1) for part in cpu_after
                }
                print(f"run {repeat + 1} CPU ms per session: {run['cpu_ms_per_session']}", flush=True)
                run["throughput"] = {
                    "drain_seconds": round(drain, 1),
                    "sessions_per_minute": round(60 * len(names) / drain, 1),
                    "db_connections_max": max(sampler.samples, default=0),
                    "db_connections_median": statistics.median(sampler.samples) if sampler.samples else 0,
                } | formation_figures(prefix, expected_facts_per_session=3)
                run["load_average_after_drain"] = os.getloadavg()[0]
                print(f"run {repeat + 1} throughput: {json.dumps(run['throughput'])}", flush=True)
                if args.mixed_seconds:
                    alone = ClientLoad(client, f"{prefix}alone-")
                    alone.run(args.mixed_seconds)
                    backlog = post_sessions(
                        client,
                        generator,
                        prefix=f"{prefix}m-",
                        first=repeat * 100_000 + 50_000,
                        count=args.sessions,
                        users=args.users,
                    )
                    drop_embedding_tasks(stack)
                    mixed = ClientLoad(client, f"{prefix}mixed-")
                    request_formation(backlog)  # queued first: the clients' threads share this process's GIL
                    mixed.run(args.mixed_seconds)
                    run["mixed"] = {
                        "alone": alone.figures(),
                        "with_formation": mixed.figures(),
                        "formed_during_window": formed_count(f"{prefix}m-"),
                    }
                    print(f"run {repeat + 1} mixed: {json.dumps(run['mixed'])}", flush=True)
                    wait_formed(f"{prefix}m-", len(backlog), timeout=args.timeout)
                result["runs"].append(run)
        finally:
            stub.terminate()
            stub_output = stub.communicate(timeout=30)[0]
            result["stub_counts"] = json.loads(stub_output.strip().splitlines()[-1]) if stub_output.strip() else {}
        result["rss_mb"] = {name: round(stack.rss_mb(name), 1) for name in stack.processes.processes}
    summarise(result)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / args.output).write_text(json.dumps(result, indent=1, default=str))
    print(f"wrote {RESULTS_DIR / args.output}")
    return 0


def summarise(result: dict) -> None:
    runs = result["runs"]
    throughput = [run["throughput"]["sessions_per_minute"] for run in runs]
    result["summary"] = {
        "sessions_per_minute_median": statistics.median(throughput),
        "sessions_per_minute_runs": throughput,
        "db_connections_max": max(run["throughput"]["db_connections_max"] for run in runs),
        "facts_lost": sum(run["throughput"]["facts_lost"] for run in runs),
        "facts_stored_twice": sum(run["throughput"]["facts_stored_twice"] for run in runs),
        "messages_formed_twice": sum(run["throughput"]["messages_formed_twice"] for run in runs),
        "llm_calls_per_session_median": statistics.median(run["throughput"]["llm_calls_per_session"] for run in runs),
        "job_minus_llm_ms_p50_median": statistics.median(run["throughput"]["job_minus_llm_ms_p50"] for run in runs),
    }
    if all("mixed" in run for run in runs) and runs:
        for operation in ("append", "search"):
            alone = statistics.median(run["mixed"]["alone"][operation]["p95_ms"] for run in runs)
            mixed = statistics.median(run["mixed"]["with_formation"][operation]["p95_ms"] for run in runs)
            result["summary"][f"{operation}_p95_ms_alone_median"] = alone
            result["summary"][f"{operation}_p95_ms_with_formation_median"] = mixed
            result["summary"][f"{operation}_p95_change_percent"] = round(100 * (mixed - alone) / alone, 1)
    print(json.dumps(result["summary"], indent=1))


if __name__ == "__main__":
    sys.exit(main())
