"""The Celery side: task metrics, the request context carried into tasks, and each worker's own metrics endpoint.

A worker serves its metrics on WORKER_METRICS_PORT (0: none) at any path, guarded like /metrics
(core.observability.access), from its main process: in multiprocess mode (PROMETHEUS_MULTIPROC_DIR, one directory per
worker) that includes every prefork child's samples. The web's /metrics cannot include them: workers run on other
hosts or containers, and the multiprocess files of processes in other PID namespaces would collide."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from celery.signals import before_task_publish, task_postrun, task_prerun, worker_ready, worker_shutdown
from django.conf import settings
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from core.observability.access import metrics_access_refusal
from core.observability.log_context import (
    request_context_clear,
    request_context_from_task_headers,
    request_context_to_task_headers,
)
from core.observability.metrics import OTHER, celery_task_duration, celery_tasks, metrics_enabled, scrape_registry

logger = logging.getLogger(__name__)

_OUTCOMES = {"SUCCESS": "succeeded", "FAILURE": "failed", "RETRY": "retried", "IGNORED": "ignored"}
_started: dict[str, float] = {}


def _task_label(task: Any) -> str:
    """The task's registered name (the project's tasks are a fixed set); anything else is "other"."""
    name = getattr(task, "name", None)
    app = getattr(task, "app", None)
    return name if name and app is not None and name in app.tasks and not name.startswith("celery.") else OTHER


def _task_started(task_id: str | None = None, **_: Any) -> None:
    if task_id and metrics_enabled():
        _started[task_id] = time.perf_counter()


def _task_finished(task_id: str | None = None, task: Any = None, state: str | None = None, **_: Any) -> None:
    if not metrics_enabled():
        return
    started = _started.pop(task_id, None) if task_id else None
    name = _task_label(task)
    celery_tasks.labels(name, _OUTCOMES.get(state or "", OTHER)).inc()
    if started is not None:
        celery_task_duration.labels(name).observe(time.perf_counter() - started)


def metrics_wsgi_app(environ: dict, start_response: Callable[..., object]) -> list[bytes]:
    refusal = metrics_access_refusal(
        remote_address=environ.get("REMOTE_ADDR", ""), authorization=environ.get("HTTP_AUTHORIZATION", "")
    )
    if refusal is not None:
        headers = [("Content-Type", "text/plain; charset=utf-8")]
        if refusal.status == 401:
            headers.append(("WWW-Authenticate", 'Bearer realm="metrics"'))
        start_response(f"{refusal.status} {'Unauthorized' if refusal.status == 401 else 'Forbidden'}", headers)
        return [refusal.message.encode() + b"\n"]
    start_response("200 OK", [("Content-Type", CONTENT_TYPE_LATEST)])
    return [generate_latest(scrape_registry(domain=False))]


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Scrapes every few seconds would drown the worker's log."""


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


_server: WSGIServer | None = None


def _exporter_start(sender: Any = None, **_: Any) -> None:
    global _server
    port = settings.WORKER_METRICS_PORT
    if not port or _server is not None or not metrics_enabled():
        return
    try:
        _server = make_server(
            settings.WORKER_METRICS_ADDRESS,
            port,
            metrics_wsgi_app,
            server_class=_ThreadingServer,
            handler_class=_QuietHandler,
        )
    except OSError as error:
        logger.error("worker metrics: cannot listen on %s:%s (%s)", settings.WORKER_METRICS_ADDRESS, port, error)
        return
    threading.Thread(target=_server.serve_forever, name="metrics-exporter", daemon=True).start()
    logger.info("worker metrics on %s:%s", settings.WORKER_METRICS_ADDRESS, port)


def _exporter_stop(**_: Any) -> None:
    global _server
    if _server is not None:
        _server.shutdown()
        _server.server_close()
        _server = None


def celery_observability_connect() -> None:
    """Connect the signal handlers (memory_project/celery.py calls this once)."""
    before_task_publish.connect(request_context_to_task_headers, weak=False, dispatch_uid="memory_request_context_out")
    task_prerun.connect(request_context_from_task_headers, weak=False, dispatch_uid="memory_request_context_in")
    task_postrun.connect(request_context_clear, weak=False, dispatch_uid="memory_request_context_clear")
    task_prerun.connect(_task_started, weak=False, dispatch_uid="memory_task_metrics_start")
    task_postrun.connect(_task_finished, weak=False, dispatch_uid="memory_task_metrics_finish")
    worker_ready.connect(_exporter_start, weak=False, dispatch_uid="memory_worker_metrics_start")
    worker_shutdown.connect(_exporter_stop, weak=False, dispatch_uid="memory_worker_metrics_stop")
