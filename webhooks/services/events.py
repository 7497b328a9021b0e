"""The outbox: `webhook_event_record` writes an event, and its deliveries to the agent's endpoints that want it, in the
caller's transaction, so an event exists exactly when the change it reports committed. Apps above call it where the
change happens (facts' services, formation, portability). After commit the deliveries are queued from a background
thread, off the request; should that enqueue be lost (a crash, the broker away), the sweep finds them pending.

Which endpoints want what is kept per process (the request path caches: one lookup per agent, invalidated in every
process when an endpoint changes), so an agent without endpoints costs a write nothing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.runtime.queueing import call_in_background, task_enqueue_safely
from core.runtime.request_path_cache import ProcessCache
from webhooks import task_names
from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent

Subscriptions = tuple[tuple[int, frozenset[str]], ...]
# Each agent's active endpoints and the event types they want (webhooks/signals.py invalidates on any change).
_subscriptions: ProcessCache[Subscriptions] = ProcessCache(max_entries=20_000)


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


def webhook_deliveries_queue(delivery_ids: Sequence[int]) -> None:
    """Queue the deliveries once the caller's transaction commits, from this process's background thread."""
    ids = list(delivery_ids)
    if ids:
        transaction.on_commit(
            lambda: call_in_background(task_enqueue_safely, task_names.DELIVER, ids, what="queueing webhooks")
        )


def webhook_events_record(*, agent_id: int, events: Sequence[NewWebhookEvent]) -> list[WebhookEvent]:
    """Write the events some active endpoint of the agent wants, with a delivery per such endpoint, in the caller's
    transaction; nothing when none does. Returns the events written."""
    subscriptions = _subscriptions_of(agent_id)
    if not subscriptions:
        return []
    wanted = [
        (event, [endpoint_id for endpoint_id, types in subscriptions if event.event_type in types]) for event in events
    ]
    wanted = [(event, endpoint_ids) for event, endpoint_ids in wanted if endpoint_ids]
    if not wanted:
        return []
    now = timezone.now()
    written = WebhookEvent.objects.bulk_create(
        [
            WebhookEvent(
                agent_id=agent_id,
                user_id=event.user_id,
                event_type=event.event_type,
                data=event.data() if callable(event.data) else event.data,
                created_at=now,
            )
            for event, _ in wanted
        ]
    )
    deliveries = WebhookDelivery.objects.bulk_create(
        [
            WebhookDelivery(event=row, endpoint_id=endpoint_id, next_attempt_at=now)
            for row, (_, endpoint_ids) in zip(written, wanted, strict=True)
            for endpoint_id in endpoint_ids
        ]
    )
    webhook_deliveries_queue([delivery.pk for delivery in deliveries])
    return written


def webhook_event_record(
    *, agent_id: int, event_type: str, data: dict[str, Any] | Callable[[], dict[str, Any]], user_id: int | None = None
) -> WebhookEvent | None:
    """One event (webhook_events_record); None when no endpoint of the agent wants it."""
    written = webhook_events_record(
        agent_id=agent_id, events=[NewWebhookEvent(event_type=event_type, data=data, user_id=user_id)]
    )
    return written[0] if written else None
