"""What wakes the dispatch once events commit, at no cost to the request that wrote them: a trigger of the webhooks'
migration makes PostgreSQL notify EVENTS_CHANNEL for each statement that inserts events, delivered when (and only if)
the transaction commits; a thread of each Celery worker that consumes the webhooks' queue listens on a connection of
its own and queues one dispatch for the notifications of GATHER_SECONDS. When it starts or reconnects it queues one
too if events wait undispatched, committed while nobody listened; the sweep covers the rest (docs/decisions/0043)."""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

import psycopg
from celery import bootsteps
from django.conf import settings
from psycopg.conninfo import make_conninfo

from core.runtime.queueing import task_enqueue_safely
from webhooks import task_names

if TYPE_CHECKING:  # for the annotations only
    from celery.worker import WorkController

logger = logging.getLogger(__name__)

EVENTS_CHANNEL = "webhook_events"
GATHER_SECONDS = 0.05
RECONNECT_SECONDS = 5.0


def _conninfo() -> str:
    database = settings.DATABASES["default"]
    return make_conninfo(
        dbname=database["NAME"],
        user=database.get("USER") or None,
        password=database.get("PASSWORD") or None,
        host=database.get("HOST") or None,
        port=str(database["PORT"]) if database.get("PORT") else None,
        application_name="webhook-listener",
    )


def _undispatched(connection: psycopg.Connection) -> bool:
    # Imported here: this module is loaded with the Celery app, before Django's apps are (memory_project/celery.py).
    from webhooks.models import WebhookEvent

    table = WebhookEvent._meta.db_table
    row = connection.execute(f"SELECT EXISTS (SELECT 1 FROM {table} WHERE dispatched_at IS NULL)").fetchone()
    return bool(row and row[0])


class WebhookEventListenerStep(bootsteps.StartStopStep):
    """The listener thread of a worker that consumes the queue the webhooks' tasks are routed to."""

    def __init__(self, worker: WorkController, **kwargs: Any) -> None:
        super().__init__(worker, **kwargs)
        self._stopping = threading.Event()

    def start(self, worker: WorkController) -> None:
        queues = worker.app.amqp.queues.consume_from or worker.app.amqp.queues
        if settings.CELERY_TASK_ROUTES[task_names.DISPATCH]["queue"] not in queues:
            return
        threading.Thread(target=self._listen, name="webhook-listener", daemon=True).start()

    def stop(self, worker: WorkController) -> None:
        self._stopping.set()

    def _listen(self) -> None:
        while not self._stopping.is_set():
            try:
                with psycopg.connect(_conninfo(), autocommit=True) as connection:
                    connection.execute(f"LISTEN {EVENTS_CHANNEL}")
                    if _undispatched(connection):  # what committed while nobody listened
                        task_enqueue_safely(task_names.DISPATCH)
                    while not self._stopping.is_set():
                        if next(connection.notifies(timeout=1.0, stop_after=1), None) is None:
                            continue
                        time.sleep(GATHER_SECONDS)  # the commits of the next moments go with this one
                        for _ in connection.notifies(timeout=0):
                            pass
                        task_enqueue_safely(task_names.DISPATCH)
            except psycopg.Error:
                logger.warning("webhook listener: the database is unreachable; retrying", exc_info=True)
                self._stopping.wait(RECONNECT_SECONDS)
