"""Bounded load test on loopback: the stack `make run` starts, N concurrent clients posting messages and searching.

    .venv/bin/python -m benchmarks.load [--clients 50] [--duration 120] [--drain-timeout 300]

1. Starts `python -m devstack run` on a free port and a temporary data folder (embedded PostgreSQL
   and Redis, runserver, make run's Celery workers and beat), with the LLM played by tests/llm_stub_server.py in a
   process of its own (a real provider's latency and failures: median 1.5 s, p95 5 s, 2% 429, 1% 500; `--llm
   offline`: the instant offline provider) and a formation interval of 10 messages so that formation runs during the
   load, not only after it.
2. Creates one agent and API key per client (each key has its own throttle budget, as in production).
3. For `--duration` seconds, every client loops: append two turns (user, assistant; idempotency keys) to its current
   session, then search its memory; a client moves to a new session every 20 messages.
4. Stops the load, closes every session (formation of the rest is queued) and measures the formation lag: the time
   until every session is formed through its last message (bounded by --drain-timeout).
5. Proves nothing was lost: every message a 2xx acknowledged is stored exactly once (read back through the API).

Prints requests/s, latency percentiles per operation, errors, formation lag and the final counts, then stops the
stack (every process it started) and deletes the data folder. Only 127.0.0.1 is ever contacted."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from devstack.postgres import EmbeddedPostgres
from devstack.processes import free_port, wait_for_port

REPO_DIR = Path(__file__).resolve().parent.parent

SESSION_LENGTH = 20
TOPICS = [
    ("I keep three beehives on my roof.", "How much honey do they make?"),
    ("My sister Ana lives in Porto and teaches maths.", "Do you visit her often?"),
    ("I am training for a half marathon in April.", "What is your weekly mileage?"),
    ("I switched to a vegetarian diet last year.", "Which dishes do you cook most?"),
    ("My dog Pixel is afraid of thunderstorms.", "Have you tried a quiet room for him?"),
]
QUERIES = ["what does the user keep on the roof", "where does Ana live", "race training", "diet", "dog name"]


@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    error_samples: list[str] = field(default_factory=list)
    acknowledged: dict[tuple[str, str], list[str]] = field(default_factory=lambda: defaultdict(list))
    retries: int = 0

    def record(self, operation: str, started: float, response: httpx.Response | None, error: str = "") -> bool:
        self.latencies[operation].append(time.perf_counter() - started)
        if response is not None and response.status_code < 400:
            return True
        self.errors[operation] += 1
        if len(self.error_samples) < 10:
            self.error_samples.append(error or f"{operation}: {response.status_code} {response.text[:200]}")
        return False


@dataclass
class Client:
    number: int
    key: str
    http: httpx.AsyncClient
    stats: Stats
    session_number: int = 0
    message_number: int = 0

    @property
    def session(self) -> str:
        return f"load-{self.number}-{self.session_number}"

    async def call(self, operation: str, method: str, path: str, body: dict | None = None) -> httpx.Response | None:
        """One request, sent again once when the connection broke before an answer (the development server closes
        kept-alive connections at will). Safe for every request here: appends carry idempotency keys, searches
        only read; it is what a client of this API should do."""
        started = time.perf_counter()
        headers = {"Authorization": f"Bearer {self.key}"}
        try:
            try:
                response = await self.http.request(method, path, json=body, headers=headers)
            except (httpx.ReadError, httpx.RemoteProtocolError, httpx.ConnectError):
                self.stats.retries += 1
                response = await self.http.request(method, path, json=body, headers=headers)
        except httpx.HTTPError as error:
            self.stats.record(operation, started, None, f"{operation}: {type(error).__name__} {error}")
            return None
        self.stats.record(operation, started, response)
        return response

    async def turn(self) -> None:
        said, asked = TOPICS[(self.number + self.message_number) % len(TOPICS)]
        messages = [
            {"role": "user", "content": said, "idempotency_key": f"m-{self.message_number}"},
            {"role": "assistant", "content": asked, "idempotency_key": f"m-{self.message_number + 1}"},
        ]
        response = await self.call(
            "append",
            "POST",
            f"/api/v1/sessions/{self.session}/messages",
            {"user": f"user-{self.number}", "messages": messages},
        )
        if response is not None and response.status_code < 400:
            self.stats.acknowledged[(self.key, self.session)] += [m["idempotency_key"] for m in messages]
        self.message_number += 2
        if self.message_number % SESSION_LENGTH == 0:
            self.session_number += 1
        await self.call(
            "search",
            "POST",
            "/api/v1/memory/search",
            {"query": QUERIES[self.message_number % len(QUERIES)], "user": f"user-{self.number}", "top_k": 5},
        )

    async def run_until(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            await self.turn()


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def start_llm_stub() -> tuple[subprocess.Popen, dict[str, str]]:
    port = free_port()
    stub = subprocess.Popen(
        [sys.executable, "-m", "tests.llm_stub_server", "--port", str(port)],
        cwd=REPO_DIR,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    wait_for_port(port, timeout=30)
    return stub, {"LLM_PROVIDER": "openai", "LLM_BASE_URL": f"http://127.0.0.1:{port}/v1", "LLM_API_KEY": "stub"}


def start_stack(
    data_dir: Path, port: int, llm_env: dict[str, str]
) -> tuple[subprocess.Popen, threading.Event, list[str]]:
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env |= llm_env | {
        "MEMORY_FORMATION_MSG_INTERVAL": "10",
        "DJANGO_SUPERUSER_USERNAME": "load",
        "DJANGO_SUPERUSER_PASSWORD": "load-test-password-not-secret",
        "LOG_LEVEL": "WARNING",
        # The development server runs each connection in a new thread: persistent database connections would pile
        # up past max_connections (one per thread for a minute). gunicorn's workers reuse theirs.
        "DATABASE_CONN_MAX_AGE": "0",
    }
    stack = subprocess.Popen(
        [sys.executable, "-m", "devstack", "--data-dir", str(data_dir), "run", "--port", str(port)],
        cwd=REPO_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    ready, output = threading.Event(), []

    def read() -> None:
        for line in stack.stdout:
            output.append(line)
            if "the memory service is up" in line:
                ready.set()

    threading.Thread(target=read, daemon=True).start()
    return stack, ready, output


def stop_stack(stack: subprocess.Popen) -> None:
    if stack.poll() is None:
        os.killpg(stack.pid, signal.SIGINT)  # devstack stops every process and server it started
        try:
            stack.wait(120)
        except subprocess.TimeoutExpired:
            os.killpg(stack.pid, signal.SIGKILL)
            stack.wait()


def create_keys(data_dir: Path, clients: int, stack_output: list[str]) -> list[str]:
    database_url = EmbeddedPostgres(data_dir / "postgres", database="memory").start()  # the running server's URL
    redis_port = next(line.split()[-1] for line in stack_output if "Redis-compatible server" in line)
    code = (
        "import json; from agents.models import Agent; from agents.services.api_keys import "
        f"api_key_create; print(json.dumps([api_key_create(agent=Agent.objects.create(external_id=f'load-{{n}}'))[1] "
        f"for n in range({clients})]))"
    )
    env = os.environ | {
        "DATABASE_URL": database_url,
        "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "DJANGO_SETTINGS_MODULE": "memory_project.settings.local",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code], cwd=REPO_DIR, env=env, capture_output=True, text=True
    )
    if result.returncode:
        raise SystemExit(f"could not create the API keys:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


async def drain(http: httpx.AsyncClient, stats: Stats, timeout: float) -> tuple[float | None, dict[str, int]]:
    """Close every session, then wait until each is formed through its last message. Returns the seconds it took
    (None past the timeout) and the formation status of the sessions still not formed then."""
    sessions = list(stats.acknowledged)
    for key, session in sessions:
        await http.post(f"/api/v1/sessions/{session}/close", headers={"Authorization": f"Bearer {key}"})
    started = time.monotonic()
    pending: dict[tuple[str, str], str] = dict.fromkeys(sessions, "unknown")
    while pending and time.monotonic() - started < timeout:
        for key, session in list(pending):
            try:
                response = await http.get(f"/api/v1/sessions/{session}", headers={"Authorization": f"Bearer {key}"})
                last = await last_message_id(http, key, session)
            except (httpx.HTTPError, KeyError) as error:  # a poll that failed is tried again on the next round
                pending[(key, session)] = f"poll failed: {type(error).__name__}"
                continue
            body = response.json()
            if response.status_code != 200:
                pending[(key, session)] = f"poll failed: {response.status_code}"
            elif body["formation_status"] == "idle" and body["formed_through_message_id"] == last:
                del pending[(key, session)]
            else:
                pending[(key, session)] = body["formation_status"]
        await asyncio.sleep(2)
    statuses: dict[str, int] = defaultdict(int)
    for status in pending.values():
        statuses[status] += 1
    return (time.monotonic() - started if not pending else None), dict(statuses)


async def stored_keys(http: httpx.AsyncClient, key: str, session: str) -> list[str]:
    keys, url = [], f"/api/v1/sessions/{session}/messages?page_size=500"
    while url:
        response = await http.get(url, headers={"Authorization": f"Bearer {key}"})
        response.raise_for_status()  # the final count must read everything, or fail loudly
        body = response.json()
        keys += [message["idempotency_key"] for message in body["results"]]
        url = body["next"]
    return keys


async def last_message_id(http: httpx.AsyncClient, key: str, session: str) -> int | None:
    body = (
        await http.get(f"/api/v1/sessions/{session}/messages?page_size=500", headers={"Authorization": f"Bearer {key}"})
    ).json()
    return body["results"][-1]["id"] if body["results"] else None


async def load(base_url: str, keys: list[str], duration: float, drain_timeout: float) -> dict:
    stats = Stats()
    limits = httpx.Limits(max_connections=len(keys) + 5, max_keepalive_connections=len(keys) + 5)
    async with httpx.AsyncClient(base_url=base_url, timeout=60, limits=limits) as http:
        clients = [Client(number=n, key=key, http=http, stats=stats) for n, key in enumerate(keys)]
        started = time.monotonic()
        await asyncio.gather(*(client.run_until(started + duration) for client in clients))
        elapsed = time.monotonic() - started
        drain_seconds, not_formed = await drain(http, stats, drain_timeout)
        lost, doubled = 0, 0
        for key, session in stats.acknowledged:
            stored = await stored_keys(http, key, session)
            lost += len(set(stats.acknowledged[(key, session)]) - set(stored))
            doubled += len(stored) - len(set(stored))
    requests = sum(len(values) for values in stats.latencies.values())
    return {
        "clients": len(keys),
        "duration_s": round(elapsed, 1),
        "requests": requests,
        "requests_per_s": round(requests / elapsed, 1),
        "latency_ms": {
            operation: {
                "count": len(values),
                "p50": round(statistics.median(values) * 1000),
                "p95": round(percentile(values, 0.95) * 1000),
                "p99": round(percentile(values, 0.99) * 1000),
            }
            for operation, values in stats.latencies.items()
        },
        "errors": dict(stats.errors),
        "retried_after_a_broken_connection": stats.retries,
        "error_samples": stats.error_samples,
        "sessions": len(stats.acknowledged),
        "messages_acknowledged": sum(len(keys) for keys in stats.acknowledged.values()),
        "messages_lost": lost,
        "messages_stored_twice": doubled,
        "formation_lag_after_close_s": round(drain_seconds, 1) if drain_seconds is not None else None,
        "sessions_not_formed_in_time_by_status": not_formed,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--duration", type=float, default=120.0, help="seconds of load (bounded)")
    parser.add_argument("--drain-timeout", type=float, default=600.0, help="longest wait for formation to catch up")
    parser.add_argument("--llm", choices=["stub", "offline"], default="stub")
    args = parser.parse_args()
    offline = {"LLM_PROVIDER": "offline", "LLM_BASE_URL": "", "LLM_API_KEY": ""}
    stub, llm_env = start_llm_stub() if args.llm == "stub" else (None, offline)

    data_dir = Path(tempfile.mkdtemp(prefix="load-", dir=REPO_DIR / ".data" if (REPO_DIR / ".data").exists() else None))
    port = free_port()
    stack, ready, output = start_stack(data_dir, port, llm_env)
    try:
        if not ready.wait(300):
            print("".join(output[-50:]))
            raise SystemExit("the stack did not come up")
        keys = create_keys(data_dir, args.clients, output)
        load_average = os.getloadavg()
        try:
            report = asyncio.run(load(f"http://127.0.0.1:{port}", keys, args.duration, args.drain_timeout))
        except Exception:
            print("".join(output[-60:]))  # what the stack said before it stopped answering
            raise
        report["load_average_before"] = [round(value, 1) for value in load_average]
        report["load_average_after"] = [round(value, 1) for value in os.getloadavg()]
        report["cpus"] = os.cpu_count()
        report["llm"] = args.llm
        print(json.dumps(report, indent=2))
        return 0 if not report["errors"] and not report["messages_lost"] and not report["messages_stored_twice"] else 1
    finally:
        stop_stack(stack)
        shutil.rmtree(data_dir, ignore_errors=True)
        if stub is not None:
            stub.terminate()
            print(f"stub LLM answered: {stub.communicate(timeout=30)[0].strip().splitlines()[-1]}")


if __name__ == "__main__":
    sys.exit(main())
