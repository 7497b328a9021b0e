"""The service's Prometheus metrics, in prometheus-client's multiprocess mode wherever PROMETHEUS_MULTIPROC_DIR is
set: each process (every gunicorn worker, every prefork Celery child) writes its samples to memory-mapped
files in that directory, and a scrape adds them up, so that /metrics counts every process's requests and not only
those of the process that answers it. Without the variable (runserver, tests) the samples stay in this process.

Why prometheus-client itself rather than django-prometheus: django-prometheus exports its own fixed families (per
view, per model, per cache backend, with labels this service does not choose) and nothing for Celery workers, which
need the same multiprocess handling anyway; the families here are the ones an operator of a memory service alerts
on, with labels bounded by the code (routes, stages, purposes, task names), never by the data
(docs/operations/reference.md).

Gauges of domain state (formation backlog and lag, review queue, embedding backlog, spend against budgets) are not
kept by any process: they are read from the database when /metrics is scraped, by collectors the apps register with
`metrics_collector_register` (core imports no app)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator

from django.conf import settings
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import REGISTRY

logger = logging.getLogger(__name__)

NAMESPACE = "memory"
OTHER = "other"

# Latency buckets (seconds): requests and tasks span milliseconds to a minute; search stages are sub-millisecond to
# a fraction of a second.
REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
STAGE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)
CALL_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
TASK_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)

HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

# Every metric below opens its file in the folder as it is defined. gunicorn's master makes the folder first
# (gunicorn.conf.py) and docker-compose.yml mounts it; Celery's workers make nothing, and a missing folder would stop
# each of them at import.
if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.makedirs(os.environ["PROMETHEUS_MULTIPROC_DIR"], exist_ok=True)

http_requests = Counter(
    "http_requests",
    "HTTP requests answered, by route (the URL pattern, never the path), method and status code.",
    ["route", "method", "status"],
    namespace=NAMESPACE,
)
http_request_duration = Histogram(
    "http_request_duration_seconds",
    "Time in Django per request, by route and method.",
    ["route", "method"],
    namespace=NAMESPACE,
    buckets=REQUEST_BUCKETS,
)
search_stage_duration = Histogram(
    "search_stage_duration_seconds",
    "Time of each stage a request recorded (the Server-Timing stages of searches: embed, text_sql, vector_sql, fuse, "
    "serialize, ...), by route and stage.",
    ["route", "stage"],
    namespace=NAMESPACE,
    buckets=STAGE_BUCKETS,
)
llm_calls = Counter(
    "llm_calls",
    "LLM calls made for memory work, by provider, purpose (the formation step) and outcome.",
    ["provider", "purpose", "outcome"],
    namespace=NAMESPACE,
)
llm_tokens = Counter(
    "llm_tokens",
    "LLM tokens spent, by provider, purpose and kind (prompt or completion).",
    ["provider", "purpose", "kind"],
    namespace=NAMESPACE,
)
llm_call_duration = Histogram(
    "llm_call_duration_seconds",
    "Latency of answered LLM calls, by provider and purpose.",
    ["provider", "purpose"],
    namespace=NAMESPACE,
    buckets=CALL_BUCKETS,
)
embedding_duration = Histogram(
    "embedding_duration_seconds",
    "Time of each call to the embedding model (one search query, or a batch of stored texts), by provider.",
    ["provider"],
    namespace=NAMESPACE,
    buckets=STAGE_BUCKETS + (2.5, 5.0, 10.0, 30.0),
)
embedded_texts = Counter(
    "embedded_texts",
    "Texts embedded, by provider.",
    ["provider"],
    namespace=NAMESPACE,
)
rerank_outcomes = Counter(
    "rerank",
    "Rerank steps of searches, by reranker (http, llm) and outcome (reranked; or the fused order kept: timeout, "
    "error, malformed, unconfigured, held).",
    ["reranker", "outcome"],
    namespace=NAMESPACE,
)
celery_tasks = Counter(
    "celery_tasks",
    "Celery tasks run by this worker, by task name and outcome (succeeded, failed, retried).",
    ["task", "outcome"],
    namespace=NAMESPACE,
)
celery_task_duration = Histogram(
    "celery_task_duration_seconds",
    "Run time of Celery tasks, by task name.",
    ["task"],
    namespace=NAMESPACE,
    buckets=TASK_BUCKETS,
)


def http_request_observe(*, route: str, method: str, status: int, seconds: float) -> None:
    """One answered HTTP request in the request families (Django's middleware, and the MCP endpoint beside it)."""
    verb = label_bounded(method, allowed=HTTP_METHODS)
    http_requests.labels(route, verb, str(status)).inc()
    http_request_duration.labels(route, verb).observe(seconds)


def metrics_enabled() -> bool:
    """METRICS_ENABLED (on by default)."""
    return settings.METRICS_ENABLED


def label_bounded(value: str, *, allowed: Iterable[str]) -> str:
    """`value` when it is one of `allowed`, else "other": a label fed by anything outside the code stays bounded."""
    return value if value in allowed else OTHER


def multiprocess_directory() -> str | None:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


DomainCollector = Callable[[], Iterable[Metric]]
_domain_collectors: dict[str, DomainCollector] = {}


def metrics_collector_register(name: str, collect: DomainCollector) -> None:
    """An app's gauges read at scrape time (from the database, Redis). `collect` yields metric families; one that
    fails is skipped for that scrape and counted in memory_metrics_collector_up, the others still answer."""
    _domain_collectors[name] = collect


class _DomainCollectors:
    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            f"{NAMESPACE}_metrics_collector_up",
            "1 when the collector of that name answered this scrape, 0 when it failed (its gauges are missing).",
            labels=["collector"],
        )
        duration = GaugeMetricFamily(
            f"{NAMESPACE}_metrics_collector_duration_seconds",
            "How long the collector of that name took in this scrape.",
            labels=["collector"],
        )
        for name, collect in _domain_collectors.items():
            started = time.perf_counter()
            try:
                families = list(collect())
            except Exception:  # one failing source must not take the whole scrape down
                logger.warning("metrics collector %s failed", name, exc_info=True)
                up.add_metric([name], 0)
            else:
                up.add_metric([name], 1)
                yield from families
            duration.add_metric([name], time.perf_counter() - started)
        yield up
        yield duration


def scrape_registry(*, domain: bool) -> CollectorRegistry:
    """What one scrape reads: every process's samples (multiprocess mode) or this process's, and with `domain` the
    apps' collectors (only the web's /metrics reads them, so that a gauge is exported once)."""
    registry = CollectorRegistry()
    directory = multiprocess_directory()
    if directory:
        from prometheus_client import multiprocess  # reads the files of every process writing to the directory

        multiprocess.MultiProcessCollector(registry, path=directory)
    else:
        registry.register(_ThisProcess())
    if domain:
        registry.register(_DomainCollectors())
    return registry


class _ThisProcess:
    """The default registry (this process's metrics, and its CPU and memory) seen from another registry."""

    def collect(self) -> Iterator[Metric]:
        yield from REGISTRY.collect()
