"""OpenTelemetry traces, off by default: with OTEL_EXPORTER_OTLP_ENDPOINT set, every process (web, workers, beat)
exports spans over OTLP/HTTP to that collector. The maintained instrumentations make the spans: Django (one span per
request), Celery (one per task, a child of the request or task that queued it: the trace context travels in the task's
headers), psycopg (one per SQL statement), httpx and the OpenAI SDK (each LLM and embeddings API call, with the
model and token counts of the GenAI conventions). What no package covers gets a span of its own here: the local
embedding model's calls and each memory-work LLM step (its purpose and outcome, around the SDK's span).

The standard OTEL_* variables configure the rest (OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_HEADERS,
OTEL_TRACES_SAMPLER, ...). Statement parameters are never recorded: they hold users' text."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from opentelemetry import trace

logger = logging.getLogger(__name__)
tracer = trace.get_tracer("memory")

_instrumented = False


def _instrumentors() -> list:
    # Loaded only where tracing is on: the instrumentations import what they wrap, and cost start-up time.
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor

    return [DjangoInstrumentor(), CeleryInstrumentor(), PsycopgInstrumentor(), HTTPXClientInstrumentor(),
            OpenAIInstrumentor()]  # fmt: skip


def instrumentations_enable() -> None:
    """Switch on the maintained instrumentations, once per process, before Django builds its middleware chain and
    before the first database connection (CoreConfig.ready). Statement parameters are never recorded."""
    global _instrumented
    if _instrumented:
        return
    options: dict[str, dict[str, Any]] = {
        "DjangoInstrumentor": {"excluded_urls": "health/,metrics"},
        "PsycopgInstrumentor": {"enable_commenter": False, "capture_parameters": False},
    }
    for instrumentor in _instrumentors():
        instrumentor.instrument(**options.get(type(instrumentor).__name__, {}))
    _instrumented = True


def tracing_configure() -> bool:
    """The exporting tracer provider and the instrumentations, when OTEL_EXPORTER_OTLP_ENDPOINT is set."""
    if not settings.OTEL_EXPORTER_OTLP_ENDPOINT or _instrumented:
        return False
    # Loaded only where tracing is on (the exporter pulls in protobuf and requests).
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: settings.OTEL_SERVICE_NAME}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    instrumentations_enable()
    logger.info("tracing: spans exported to %s", settings.OTEL_EXPORTER_OTLP_ENDPOINT)
    return True


@contextlib.contextmanager
def span(name: str, **attributes: Any) -> Iterator[trace.Span | None]:
    """A span of our own where no instrumentation makes one; nothing at all while tracing is off."""
    if not _instrumented:
        yield None
        return
    with tracer.start_as_current_span(name, attributes=attributes) as current:
        yield current
