"""Health of each component the service needs. Each check returns its status ("up", "degraded": working but not
fully, or "down") with details, and never raises. Apps add checks of their own with `health_check_register`."""

from __future__ import annotations

import time
from collections.abc import Callable

import redis
from django.conf import settings
from django.db import connection

from core.embeddings.providers import get_embedding_provider
from core.runtime.worker_heartbeat import worker_heartbeat_age_seconds

ComponentStatus = dict[str, object]


def _database() -> ComponentStatus:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return {"status": "up"}


def _pgvector() -> ComponentStatus:
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
    if row is None:
        return {"status": "down", "detail": "the vector extension is not installed (run migrations)"}
    return {"status": "up", "version": row[0]}


def _redis() -> ComponentStatus:
    redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2).ping()
    return {"status": "up"}


def _worker() -> ComponentStatus:
    """A live worker for each queue: the default one (embedding, sweeps) and formation's."""
    queues: dict[str, ComponentStatus] = {}
    for queue in (settings.CELERY_TASK_DEFAULT_QUEUE, settings.FORMATION_QUEUE):
        age, hostname = worker_heartbeat_age_seconds(queue=queue)
        if age is None:
            queues[queue] = {"status": "down", "detail": "no worker heartbeat"}
        elif age > settings.WORKER_HEARTBEAT_MAX_AGE_SECONDS:
            queues[queue] = {"status": "down", "detail": f"last heartbeat {age:.0f}s ago", "worker": hostname}
        else:
            queues[queue] = {"status": "up", "last_heartbeat_seconds_ago": round(age, 1), "worker": hostname}
    down = sorted(queue for queue, status in queues.items() if status["status"] != "up")
    result: ComponentStatus = {"status": "down" if down else "up", "queues": queues}
    if down:
        result["detail"] = f"no live worker for queue {', '.join(down)}"
    return result


def _embeddings() -> ComponentStatus:
    provider = get_embedding_provider()
    vector = provider.embed_query("health check")
    if len(vector) != provider.dimensions:
        return {"status": "down", "detail": f"expected {provider.dimensions} dimensions, got {len(vector)}"}
    return {"status": "up", "space": provider.space_name}


CHECKS: dict[str, Callable[[], ComponentStatus]] = {
    "database": _database,
    "pgvector": _pgvector,
    "redis": _redis,
    "worker": _worker,
    "embeddings": _embeddings,
}


def health_check_register(name: str, check: Callable[[], ComponentStatus]) -> None:
    CHECKS[name] = check


def health_components() -> dict[str, ComponentStatus]:
    results: dict[str, ComponentStatus] = {}
    for name, check in CHECKS.items():
        started = time.monotonic()
        try:
            result = check()
        except Exception as error:  # a health check reports every failure instead of raising it
            result = {"status": "down", "detail": f"{type(error).__name__}: {error}"[:300]}
        result["latency_ms"] = round((time.monotonic() - started) * 1000, 1)
        results[name] = result
    return results
