"""Workers write a heartbeat to Redis on a timer, so /health/ can tell whether any worker is alive without
depending on beat or on a task round trip."""

from __future__ import annotations

import logging
import socket
import time

import redis
from celery import bootsteps

logger = logging.getLogger(__name__)

HEARTBEAT_KEY = "memory:worker-heartbeat"


def _redis_client() -> redis.Redis:
    from django.conf import settings

    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)


def worker_heartbeat_write(*, hostname: str) -> None:
    from django.conf import settings

    _redis_client().set(
        HEARTBEAT_KEY, f"{time.time():.3f} {hostname}", ex=settings.WORKER_HEARTBEAT_MAX_AGE_SECONDS * 4
    )


def worker_heartbeat_age_seconds() -> tuple[float | None, str | None]:
    """Seconds since the newest heartbeat of any worker, and that worker's name; (None, None) if there is none."""
    value = _redis_client().get(HEARTBEAT_KEY)
    if not value:
        return None, None
    stamp, _, hostname = value.decode().partition(" ")
    return max(0.0, time.time() - float(stamp)), hostname


class WorkerHeartbeatStep(bootsteps.StartStopStep):
    requires = {"celery.worker.components:Timer"}

    def __init__(self, worker, **kwargs) -> None:
        super().__init__(worker, **kwargs)
        self.timer_entry = None

    def start(self, worker) -> None:
        from django.conf import settings

        hostname = getattr(worker, "hostname", None) or socket.gethostname()
        self._beat(hostname)
        self.timer_entry = worker.timer.call_repeatedly(
            settings.WORKER_HEARTBEAT_INTERVAL_SECONDS, self._beat, (hostname,), priority=10
        )

    def stop(self, worker) -> None:
        if self.timer_entry is not None:
            self.timer_entry.cancel()
            self.timer_entry = None

    def _beat(self, hostname: str) -> None:
        try:
            worker_heartbeat_write(hostname=hostname)
        except redis.RedisError:
            logger.warning("worker heartbeat: Redis unreachable")
