"""Workers write a heartbeat to Redis on a timer, one per queue they consume, so /health/ can tell whether each
queue (the default one, formation's) has a live worker without depending on beat or on a task round trip."""

from __future__ import annotations

import logging
import socket
import time
from typing import TYPE_CHECKING, Any

import redis
from celery import bootsteps
from django.conf import settings

if TYPE_CHECKING:  # for the annotations only
    from celery.worker import WorkController

logger = logging.getLogger(__name__)

HEARTBEAT_KEY = "memory:worker-heartbeat"  # one key per queue: HEARTBEAT_KEY:<queue>


def _redis_client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)


def worker_heartbeat_write(*, hostname: str, queues: list[str]) -> None:
    pipe = _redis_client().pipeline(transaction=False)
    for queue in queues:
        pipe.set(
            f"{HEARTBEAT_KEY}:{queue}",
            f"{time.time():.3f} {hostname}",
            ex=settings.WORKER_HEARTBEAT_MAX_AGE_SECONDS * 4,
        )
    pipe.execute()


def worker_heartbeat_age_seconds(*, queue: str) -> tuple[float | None, str | None]:
    """Seconds since the newest heartbeat of a worker consuming `queue`, and that worker's name; (None, None) if
    there is none."""
    value = _redis_client().get(f"{HEARTBEAT_KEY}:{queue}")
    if not value:
        return None, None
    text = value.decode() if isinstance(value, bytes) else value
    stamp, _, hostname = text.partition(" ")
    return max(0.0, time.time() - float(stamp)), hostname


class WorkerHeartbeatStep(bootsteps.StartStopStep):
    requires = ("celery.worker.components:Timer",)

    def __init__(self, worker: WorkController, **kwargs: Any) -> None:
        super().__init__(worker, **kwargs)
        self.timer_entry = None

    def start(self, worker: WorkController) -> None:
        hostname = getattr(worker, "hostname", None) or socket.gethostname()
        # The queues chosen with -Q, or every queue the app declares when the worker was given none.
        queues = sorted(worker.app.amqp.queues.consume_from or worker.app.amqp.queues)
        self._beat(hostname, queues)
        # The Timer step (required above) has set worker.timer; the stubs' Timer lacks call_repeatedly.
        self.timer_entry = worker.timer.call_repeatedly(  # type: ignore[union-attr]
            settings.WORKER_HEARTBEAT_INTERVAL_SECONDS, self._beat, (hostname, queues), priority=10
        )

    def stop(self, worker: WorkController) -> None:
        if self.timer_entry is not None:
            self.timer_entry.cancel()
            self.timer_entry = None

    def _beat(self, hostname: str, queues: list[str]) -> None:
        try:
            worker_heartbeat_write(hostname=hostname, queues=queues)
        except redis.RedisError:
            logger.warning("worker heartbeat: Redis unreachable")
