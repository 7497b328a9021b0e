"""LOG_FORMAT=json, and the request id that follows a request's work: into the Celery tasks it queues (a real worker
process writing JSON lines) and into the threads it hands work to (the query-embedding pool, the background
bookkeeping thread)."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import Future

import numpy as np
import pytest
from django.test import Client

from agents.services.api_keys import api_key_create
from conversations.task_names import EMBED_MESSAGES
from core.embeddings.providers import EmbeddingProvider
from core.observability.log_context import JsonFormatter
from core.runtime.logging import RequestIdFilter, SecretRedactionFilter, current_agent, current_request_id
from core.runtime.queueing import call_in_background
from core.search.retrieval import query_embedding_start
from memory_project.celery import app
from tests.conftest import REPO_DIR, WORKER_QUEUES, database_url_of_test_database
from tests.formation_support import celery_workers_paused, wait_until


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """The root logger also writes, through the JSON formatter and the settings' filters, to this stream."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RequestIdFilter())
    handler.addFilter(SecretRedactionFilter())
    logging.getLogger().addHandler(handler)
    try:
        yield stream
    finally:
        logging.getLogger().removeHandler(handler)


def _records(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


@pytest.mark.django_db
def test_json_lines_name_the_request_and_agent_and_redact_secrets(json_lines, agent):
    _, key = api_key_create(agent=agent, name="json")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {key}", HTTP_X_REQUEST_ID="req-json-1")
    assert api.get("/api/v1/sessions/nobody-here", {"user": "u"}).status_code == 404

    record = next(r for r in _records(json_lines) if r["logger"] == "django.request")
    assert (
        record["level"] == "WARNING" and record["request_id"] == "req-json-1" and record["agent"] == agent.external_id
    )
    assert record["message"].startswith("Not Found") and record["task_id"] is None
    assert {"time", "level", "logger", "message", "request_id", "agent", "task_id", "task_name"} <= set(record)

    try:
        raise RuntimeError("upstream refused key sk-abcdefghijklmnopqrstuvwxyz")
    except RuntimeError:
        logging.getLogger("tests.json").exception("call failed with Authorization: Bearer abcdefghijklmnop")
    failed = _records(json_lines)[-1]
    assert "abcdefghijklmnop" not in json.dumps(failed) and "[redacted]" in failed["message"]
    assert "RuntimeError" in failed["exc_info"] and "sk-abcdef" not in failed["exc_info"]


class _LoggingEmbeddings(EmbeddingProvider):
    provider, model, dimensions = "test", "logging", 3

    def embed(self, texts):
        logging.getLogger("tests.embedding").warning("embedding %d text(s)", len(texts))
        return [np.ones(3, dtype=np.float32) / np.sqrt(3) for _ in texts]

    def threads_set(self, threads):
        """Nothing to set."""


def test_the_query_embedding_thread_and_the_background_thread_log_the_request_id(json_lines):
    request_token, agent_token = current_request_id.set("req-threads-7"), current_agent.set("agent-threads")
    try:
        vector: Future = query_embedding_start(provider=_LoggingEmbeddings(), text=f"query {uuid.uuid4()}")
        vector.result(timeout=10)
        done: Future = Future()
        call_in_background(lambda: (logging.getLogger("tests.background").warning("bookkeeping"), done.set_result(1)),
                           what="test bookkeeping")  # fmt: skip
        done.result(timeout=10)
    finally:
        current_request_id.reset(request_token)
        current_agent.reset(agent_token)

    by_logger = {record["logger"]: record for record in _records(json_lines)}
    for name in ("tests.embedding", "tests.background"):
        assert by_logger[name]["request_id"] == "req-threads-7", by_logger[name]
        assert by_logger[name]["agent"] == "agent-threads"


@pytest.fixture
def json_worker(tmp_path, django_db_setup) -> Iterator[tuple[subprocess.Popen, object]]:
    """A Celery worker on the test database writing JSON lines (LOG_FORMAT=json, INFO) to a file."""
    name = f"json-worker-{uuid.uuid4().hex[:6]}@localhost"
    output = tmp_path / "worker.log"
    env = os.environ | {"DATABASE_URL": database_url_of_test_database(), "LOG_FORMAT": "json"}
    command = [sys.executable, "-m", "celery", "-A", "memory_project", "worker", "--pool", "solo", "-l", "info"]
    with celery_workers_paused(), output.open("w") as log:
        process = subprocess.Popen(
            [*command, "-n", name, "-Q", WORKER_QUEUES],
            env=env, cwd=REPO_DIR, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 90
            while not app.control.ping(destination=[name], timeout=1.0):
                assert process.poll() is None and time.monotonic() < deadline, output.read_text()[-3000:]
            yield process, output
        finally:
            process.terminate()
            process.wait(30)


@pytest.mark.django_db(transaction=True)
def test_a_task_a_request_queued_logs_that_request_s_id(agent, json_worker):
    process, output = json_worker
    _, key = api_key_create(agent=agent, name="propagation")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {key}", HTTP_X_REQUEST_ID="req-into-task-42")
    response = api.post(
        "/api/v1/sessions/chat-9/messages",
        {"user": "u9", "messages": [{"role": "user", "content": "I repaint boats in winter."}]},
        content_type="application/json",
    )
    assert response.status_code == 201

    def task_lines() -> list[dict]:
        lines = []
        for line in output.read_text().splitlines():
            if line.startswith("{"):
                record = json.loads(line)
                if record.get("task_name") == EMBED_MESSAGES:
                    lines.append(record)
        # An embedding task an earlier test queued and left in the broker may run first, under its own request's id.
        return [record for record in lines if "succeeded" in record["message"] and record["agent"] == agent.external_id]

    done = wait_until(task_lines, timeout=60, what="the embedding task's JSON log line", process=process)[0]
    assert done["request_id"] == "req-into-task-42"
    assert done["task_id"] and done["level"] == "INFO"
    # Not every line of the worker is a task's: its own start-up lines carry neither id.
    first = json.loads(next(line for line in output.read_text().splitlines() if line.startswith("{")))
    assert first["request_id"] is None and first["task_id"] is None
