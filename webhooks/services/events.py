"""The outbox: `webhook_event_record` writes an event in the caller's transaction, with the endpoints of the agent that
want it, so an event exists exactly when the change it reports committed; apps above call it where the change happens
(facts' services, formation, portability). It is one INSERT, and nothing at all for an agent without endpoints (which
endpoints want what is kept per process: the request path caches, invalidated in every process when an endpoint
changes).

After commit the event's id is handed to this process's dispatch thread, which queues the events of the last few
milliseconds as one task (`webhooks.dispatch_events`): the writing request neither waits for the broker nor pays a
task per write. A worker then makes one delivery per endpoint and sends them. Should the hand-over be lost (the
process exits, the broker is away), the sweep finds the event undispatched (docs/decisions/0043)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.runtime.queueing import task_enqueue_safely
from core.runtime.request_path_cache import ProcessCache
from webhooks import task_names
from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent

Subscriptions = tuple[tuple[int, frozenset[str]], ...]
# Each agent's active endpoints and the event types they want (webhooks/signals.py invalidates on any change).
_subscriptions: ProcessCache[Subscriptions] = ProcessCache(max_entries=20_000)
# How long the dispatch thread gathers events before it queues them as one task, and how many a task takes.
DISPATCH_GATHER_SECONDS = 0.05
DISPATCH_CHUNK = 100


@dataclass(frozen=True)
class NewWebhookEvent:
    """An event to record. `data` may be a function that builds it, called only when an endpoint wants the event."""

    event_type: str
    data: dict[str, Any] | Callable[[], dict[str, Any]]
    user_id: int | None = None  # the end user it concerns: erasing them erases the event


def _subscriptions_of(agent_id: int) -> Subscriptions:
    return _subscriptions.get_or_load(
        key=agent_id,
        load=lambda: tuple(
            (endpoint_id, frozenset(event_types))
            for endpoint_id, event_types in WebhookEndpoint.objects.filter(agent_id=agent_id, is_active=True)
            .order_by("pk")
            .values_list("pk", "event_types")
        ),
    )


class _DispatchThread:
    """Event ids committed in this process, queued for dispatch from a thread of its own: the ids handed over within
    DISPATCH_GATHER_SECONDS of the first go as one task. Started on first use in each process (forked workers too)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids: list[int] = []
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._pid = 0

    def hand_over(self, event_ids: Sequence[int]) -> None:
        with self._lock:
            first_of_a_batch = not self._ids
            self._ids.extend(event_ids)
            if self._thread is None or self._pid != os.getpid() or not self._thread.is_alive():
                self._pid = os.getpid()
                self._thread = threading.Thread(target=self._run, name="webhook-dispatch", daemon=True)
                self._thread.start()
        if first_of_a_batch:  # the thread is asleep, or gathering ids already: only the first of a batch wakes it
            self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            time.sleep(DISPATCH_GATHER_SECONDS)
            with self._lock:
                ids, self._ids = self._ids, []
                self._wake.clear()
            for start in range(0, len(ids), DISPATCH_CHUNK):
                task_enqueue_safely(task_names.DISPATCH, ids[start : start + DISPATCH_CHUNK])


_dispatch_thread = _DispatchThread()


def webhook_events_record(*, agent_id: int, events: Sequence[NewWebhookEvent]) -> list[WebhookEvent]:
    """Write the events some active endpoint of the agent wants, each with those endpoints, in the caller's
    transaction; nothing when none does. Returns the events written."""
    subscriptions = _subscriptions_of(agent_id)
    if not subscriptions:
        return []
    wanted = [
        (event, [endpoint_id for endpoint_id, types in subscriptions if event.event_type in types]) for event in events
    ]
    now = timezone.now()
    written = WebhookEvent.objects.bulk_create(
        [
            WebhookEvent(
                agent_id=agent_id,
                user_id=event.user_id,
                event_type=event.event_type,
                data=event.data() if callable(event.data) else event.data,
                endpoint_ids=endpoint_ids,
                created_at=now,
            )
            for event, endpoint_ids in wanted
            if endpoint_ids
        ]
    )
    if written:
        event_ids = [event.pk for event in written]
        transaction.on_commit(lambda: _dispatch_thread.hand_over(event_ids))
    return written


def webhook_event_record(
    *, agent_id: int, event_type: str, data: dict[str, Any] | Callable[[], dict[str, Any]], user_id: int | None = None
) -> WebhookEvent | None:
    """One event (webhook_events_record); None when no endpoint of the agent wants it."""
    written = webhook_events_record(
        agent_id=agent_id, events=[NewWebhookEvent(event_type=event_type, data=data, user_id=user_id)]
    )
    return written[0] if written else None


@transaction.atomic
def webhook_events_dispatch(*, event_ids: Sequence[int]) -> list[int]:
    """One delivery per endpoint that wanted each event and still exists, for the events not dispatched yet (a second
    dispatch of the same events makes nothing twice). Returns the ids of those events' pending deliveries."""
    events = list(WebhookEvent.objects.select_for_update().filter(pk__in=list(event_ids), dispatched_at__isnull=True))
    if events:
        existing = set(
            WebhookEndpoint.objects.filter(pk__in={pk for e in events for pk in e.endpoint_ids}).values_list(
                "pk", flat=True
            )
        )
        now = timezone.now()
        WebhookDelivery.objects.bulk_create(
            [
                WebhookDelivery(event=event, endpoint_id=endpoint_id, next_attempt_at=now)
                for event in events
                for endpoint_id in event.endpoint_ids
                if endpoint_id in existing
            ],
            ignore_conflicts=True,
        )
        WebhookEvent.objects.filter(pk__in=[event.pk for event in events]).update(dispatched_at=now)
    return list(
        WebhookDelivery.objects.filter(event_id__in=list(event_ids), status=WebhookDelivery.Status.PENDING)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
