"""Shared fixtures. The database and Redis are the real servers `make test` starts; only the LLM is replaced."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.core.cache import cache

from agents.models import Agent, EndUser
from conversations.models import Session
from core.embeddings import spaces
from tests import fuzzing
from tests.api_support import api_client_for
from tests.factories import AgentFactory, EndUserFactory, SessionFactory
from tests.reembed_support import EmbeddingStub

REPO_DIR = Path(__file__).resolve().parent.parent


def database_url_of_test_database() -> str:
    db = settings.DATABASES["default"]
    credentials = quote(db["USER"], safe="") + (f":{quote(db['PASSWORD'], safe='')}" if db.get("PASSWORD") else "")
    host = quote(db["HOST"] or "localhost", safe="") + (f":{db['PORT']}" if db.get("PORT") else "")
    return f"postgres://{credentials}@{host}/{db['NAME']}"


# A test worker consumes both queues: the default one and formation's (production runs a worker for each).
WORKER_QUEUES = "celery,formation"
# The session's live Celery workers by name (celery_worker_process), for the teardown below.
_live_workers: dict[str, subprocess.Popen] = {}


@pytest.fixture(autouse=True)
def _clear_cache() -> Iterator[None]:
    cache.clear()
    yield


def _transactional(request: pytest.FixtureRequest) -> bool:
    marker = request.node.get_closest_marker("django_db")
    marked = marker is not None and marker.kwargs.get("transaction", False)
    return marked or bool({"transactional_db", "live_server"} & set(request.fixturenames))


@pytest.fixture(autouse=True)
def _background_work_settled_before_flush(_django_db_marker, request) -> Iterator[None]:
    """Set up after the database fixtures, so torn down before a transactional test's flush: the session's live
    worker must not still be running a task this test queued (a formation holding row locks) while the flush
    truncates every table, or PostgreSQL aborts the flush as a deadlock. Tasks the test left queued are dropped;
    the worker counts as idle when two polls in a row find nothing running or reserved."""
    yield
    if not _live_workers or not _transactional(request):
        return
    from memory_project.celery import app

    idle_polls, deadline = 0, time.monotonic() + 60
    while idle_polls < 2:
        if any(process.poll() is not None for process in _live_workers.values()):
            return  # a dead worker runs nothing; the test that needs it fails on its own
        if time.monotonic() > deadline:
            warnings.warn("the live Celery worker was still busy 60 s after the test ended", stacklevel=1)
            return
        app.control.purge()
        inspect = app.control.inspect(destination=list(_live_workers), timeout=1.0, limit=len(_live_workers))
        active, reserved = inspect.active(), inspect.reserved()
        busy = active is None or reserved is None or any(active.values()) or any(reserved.values())
        idle_polls = 0 if busy else idle_polls + 1
        time.sleep(0.05)


@pytest.fixture(autouse=True)
def _vector_indexes_dropped_after(_django_db_marker, request) -> Iterator[None]:
    """Per-agent HNSW indexes are DDL: a transactional test's flush truncates their rows but keeps them. Dropped
    after the test that built them (only transactional tests can: the builds are concurrent)."""
    yield
    if not _transactional(request):
        return
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'fact\\_vectors\\_%'")
        for (name,) in cursor.fetchall():
            cursor.execute(f'DROP INDEX IF EXISTS "{name}"')


@pytest.fixture
def agent(db) -> Agent:
    return AgentFactory(name="Test agent")


@pytest.fixture
def api(agent: Agent):
    """The agent's REST client (tests.api_support)."""
    return api_client_for(agent)


@pytest.fixture
def end_user(agent: Agent) -> EndUser:
    return EndUserFactory(agent=agent, external_id="user-1")


@pytest.fixture
def session(agent: Agent, end_user: EndUser) -> Session:
    return SessionFactory(user=end_user, external_id="session-1")


@pytest.fixture
def embedding_stub(settings) -> Iterator[EmbeddingStub]:
    """An OpenAI-compatible embeddings endpoint on 127.0.0.1 that embeds by hashed bag of words
    (tests.reembed_support), where the embedding settings point."""
    stub = EmbeddingStub()
    stub.thread.start()
    settings.EMBEDDING_BASE_URL = stub.base_url
    settings.EMBEDDING_API_KEY = "test-key"
    spaces._provider_for.cache_clear()
    yield stub
    stub.server.shutdown()
    stub.server.server_close()
    spaces._provider_for.cache_clear()


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, django_db_blocker) -> Iterator[subprocess.Popen]:
    """A real Celery worker process on the test database and the test Redis. Tests that use it must commit their
    data (django_db(transaction=True)) so that the worker sees it."""
    from memory_project.celery import app

    name = f"test-worker-{uuid.uuid4().hex[:6]}@localhost"
    env = os.environ | {"DATABASE_URL": database_url_of_test_database()}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "memory_project",
            "worker",
            "--pool",
            "solo",
            "-l",
            "warning",
            "-n",
            name,
            "-Q",
            WORKER_QUEUES,
        ],
        env=env,
        cwd=REPO_DIR,
        stdin=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 90
    while not app.control.ping(destination=[name], timeout=1.0):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError("the test Celery worker did not start")
    _live_workers[name] = process
    yield process
    del _live_workers[name]
    process.terminate()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture
def scripted_llm():
    """A scripted LLM in place of the configured provider, for code running in this process."""
    from core.llm.providers import set_llm_provider_override
    from tests.fakes import ScriptedLLM

    fake = ScriptedLLM()
    set_llm_provider_override(fake)
    yield fake
    set_llm_provider_override(None)


def celery_worker_start(
    *, extra_env: dict[str, str] | None = None, queues: str | None = None, pool: tuple[str, ...] = ("--pool", "solo")
) -> subprocess.Popen:
    """Start a Celery worker process (solo pool unless `pool` says otherwise) on the test database and Redis, with
    extra environment (another settings module, LLM, time limits) and optionally other queues (-Q; default both of
    the deployment's); return once it answers a ping."""
    from memory_project.celery import app

    name = f"test-worker-{uuid.uuid4().hex[:6]}@localhost"
    env = os.environ | {"DATABASE_URL": database_url_of_test_database()} | (extra_env or {})
    command = [sys.executable, "-m", "celery", "-A", "memory_project", "worker", *pool, "-l", "warning"]
    process = subprocess.Popen(
        [*command, "-n", name, "-Q", queues or WORKER_QUEUES], env=env, cwd=REPO_DIR, stdin=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 90
    while not app.control.ping(destination=[name], timeout=1.0):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            process.wait()
            raise RuntimeError(f"the test Celery worker {name} did not start")
    return process


@pytest.fixture
def celery_worker_launcher(django_db_setup) -> Iterator:
    """celery_worker_start for one test: every worker it started is stopped at teardown (killed if it lingers)."""
    started: list[subprocess.Popen] = []

    def launch(**kwargs) -> subprocess.Popen:
        process = celery_worker_start(**kwargs)
        started.append(process)
        return process

    yield launch
    for process in started:
        if process.poll() is None:
            process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def pytest_sessionfinish(session, exitstatus) -> None:
    fuzzing.tally_write()
