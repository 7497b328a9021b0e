"""OpenTelemetry traces with the SDK's in-memory exporter: one memory-augmented chat request (it searches the user's
memory, calls the upstream LLM and stores both turns, which makes formation due) and the formation task it queues,
run by a real Celery worker in this process so that its spans reach the same exporter, make ONE trace: the request's
span, its SQL, embedding and LLM spans, the task's publish and run spans, and the task's own SQL and LLM spans.

The LLM is the local OpenAI-compatible stub, reached through the openai SDK (whose calls the openai-v2 and httpx
instrumentations trace). Tracing is switched on for this module only and off again after it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from celery.contrib.testing.worker import start_worker
from django.db import connections
from django.test import Client
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from agents.services.api_keys import api_key_create
from core.llm.providers import _cached_llm_provider, set_llm_provider_override
from core.models import JobStatus
from core.observability import tracing
from facts.services.facts import fact_create
from formation.models import FormationJob
from formation.services import chat_proxy
from memory_project.celery import app
from tests.conftest import REPO_DIR, database_url_of_test_database
from tests.factories import AgentFactory, EndUserFactory
from tests.formation_support import celery_workers_paused, wait_until
from tests.llm_stub_server import StubLLMServer

pytestmark = pytest.mark.django_db(transaction=True)

_exporter = InMemorySpanExporter()


def _instrumentations_disable() -> None:
    """The reverse of tracing.instrumentations_enable, for this module: the test process goes on without tracing
    (a service process never switches it off)."""
    for instrumentor in tracing._instrumentors():
        instrumentor.uninstrument()
    tracing._instrumented = False


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_exporter))
        trace.set_tracer_provider(provider)
    tracing.instrumentations_enable()
    connections.close_all()  # the connections opened from now on are traced
    _exporter.clear()
    try:
        yield _exporter
    finally:
        _instrumentations_disable()
        connections.close_all()
        _exporter.clear()


@pytest.fixture
def stub_llm(settings) -> Iterator[StubLLMServer]:
    server = StubLLMServer()
    with server.running():
        settings.LLM_PROVIDER, settings.LLM_BASE_URL, settings.LLM_API_KEY = "openai", server.base_url, "stub-key"
        set_llm_provider_override(None)
        _cached_llm_provider.cache_clear()
        chat_proxy._upstream_client.cache_clear()
        try:
            yield server
        finally:
            _cached_llm_provider.cache_clear()
            chat_proxy._upstream_client.cache_clear()


@pytest.fixture
def worker_in_this_process() -> Iterator[None]:
    with (
        celery_workers_paused(),
        start_worker(app, pool="solo", perform_ping_check=False, queues=["celery", "formation"], shutdown_timeout=30),
    ):
        yield


def test_a_chat_request_and_the_formation_it_queues_make_one_trace(spans, stub_llm, worker_in_this_process):
    agent = AgentFactory(external_id="traced", formation_msg_interval=2)
    gene = EndUserFactory(agent=agent, external_id="gene")
    fact_create(agent=agent, user=gene, scopes=["user"], content="Gene works night shifts at the harbour")
    _, key = api_key_create(agent=agent, name="trace test")

    response = Client(HTTP_AUTHORIZATION=f"Bearer {key}").post(
        "/v1/chat/completions",
        {
            "model": "stub-model",
            "messages": [{"role": "user", "content": "How do I sleep after my night shifts?"}],
            "memory_user": "gene",
            "memory_session": "s-trace",
        },
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    assert response.json()["memory"]["facts"], "the request searched and found the user's fact"

    def formed() -> bool:
        return FormationJob.objects.filter(session__external_id="s-trace", status=JobStatus.SUCCEEDED).exists()

    wait_until(formed, timeout=90, what="the formation the chat request queued")

    def task_run_span():
        return next(
            (s for s in spans.get_finished_spans() if s.kind == SpanKind.CONSUMER and "form_session" in s.name), None
        )

    run = wait_until(task_run_span, timeout=30, what="the formation task's span")
    finished = spans.get_finished_spans()
    request = next(s for s in finished if s.kind == SpanKind.SERVER and "chat/completions" in s.name)
    in_trace = [s for s in finished if s.context.trace_id == request.context.trace_id]
    by_id = {s.context.span_id: s for s in in_trace}

    def under(span, ancestor) -> bool:
        while span.parent is not None and span.parent.span_id in by_id:
            if span.parent.span_id == ancestor.context.span_id:
                return True
            span = by_id[span.parent.span_id]
        return False

    # The task's run is in the request's trace, below the publish span the request made.
    assert run.context.trace_id == request.context.trace_id
    publish = next(s for s in in_trace if s.kind == SpanKind.PRODUCER and "form_session" in s.name)
    assert under(publish, request) and under(run, publish)

    def sql(span) -> bool:
        return span.attributes.get("db.system") == "postgresql" or span.attributes.get("db.system.name") == "postgresql"

    def llm_api_call(span) -> bool:
        return span.kind == SpanKind.CLIENT and any(key.startswith("gen_ai.") for key in span.attributes)

    # The request's own work: SQL, the query's embedding, the upstream LLM call (the SDK's span, its HTTP call).
    request_spans = [s for s in in_trace if under(s, request) and not under(s, publish)]
    assert any(sql(s) for s in request_spans)
    assert any(s.name == "embedding" for s in request_spans)
    assert any(llm_api_call(s) for s in request_spans)
    # The formation's: SQL and its LLM steps (our span per step, the SDK's span inside it).
    task_spans = [s for s in in_trace if under(s, run)]
    assert any(sql(s) for s in task_spans)
    steps = {s.attributes.get("llm.purpose") for s in task_spans if s.name.startswith("llm ")}
    assert {"extract_facts", "reflect"} <= steps
    assert any(llm_api_call(s) and under(s, run) for s in task_spans)
    # No statement parameter, so no user text, in a SQL span.
    assert not any("night shifts" in str(value) for s in in_trace if sql(s) for value in s.attributes.values())


def _process_spans_exported(*, endpoint_set: bool) -> tuple[str, list[bytes]]:
    """Start Django in a new process (OTEL_EXPORTER_OTLP_ENDPOINT naming a local collector, or not), run a query
    there, and collect what the process posts to the collector."""
    received: list[bytes] = []

    class Collector(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append(self.path.encode() + b" " + self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format, *args) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    script = (
        "import django; django.setup()\n"
        "from django.db import connection\n"
        "from opentelemetry import trace\n"
        "from core.observability import tracing\n"
        "with connection.cursor() as cursor: cursor.execute('SELECT 1')\n"
        "provider = trace.get_tracer_provider()\n"
        "getattr(provider, 'force_flush', lambda: None)()\n"
        "print('tracing', tracing._instrumented)\n"
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
    env["DATABASE_URL"] = database_url_of_test_database()
    if endpoint_set:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        result = subprocess.run(
            [sys.executable, "-c", script], env=env, cwd=REPO_DIR, capture_output=True, text=True, timeout=120
        )
    finally:
        server.shutdown()
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout, received


def test_tracing_is_off_unless_an_otlp_endpoint_is_set_and_then_exports_spans():
    printed, received = _process_spans_exported(endpoint_set=False)
    assert "tracing False" in printed and received == []

    printed, received = _process_spans_exported(endpoint_set=True)
    assert "tracing True" in printed
    assert received and all(body.startswith(b"/v1/traces ") for body in received)
    assert b"SELECT" in b"".join(received)  # the psycopg span of the query, in OTLP protobuf
