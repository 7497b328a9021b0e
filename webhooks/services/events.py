"""The outbox: `webhook_event_record` writes an event in the caller's transaction, with the endpoints of the agent that
want it, so an event exists exactly when the change it reports committed; apps above call it where the change happens
(facts' services, formation, portability). It is one INSERT, and nothing at all for an agent without endpoints (which
endpoints want what is kept per process: the request path caches, invalidated in every process when an endpoint
changes).

Nothing else happens on the writing request: the insert makes PostgreSQL notify `webhook_events` when the transaction
commits (a trigger of the webhooks' migration), a worker's listener (webhooks/listener.py) queues the dispatch, and
the dispatch makes one delivery per endpoint and sends them. Should no listener hear it (none runs, or it was
reconnecting), the sweep finds the event undispatched (docs/decisions/0043)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.runtime.request_path_cache import ProcessCache
from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent

# Events dispatched by one task at most (the rest by the next).
DISPATCH_BATCH = 500

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
def webhook_events_dispatch(*, event_ids: Sequence[int] | None = None) -> list[int]:
    """One delivery per endpoint that wanted each event and still exists, for the events not dispatched yet: these
    ones, or the oldest DISPATCH_BATCH of them all. Events another dispatch holds are skipped, and a dispatched event
    makes nothing twice. Returns the ids of the new deliveries."""
    undispatched = WebhookEvent.objects.filter(dispatched_at__isnull=True)
    if event_ids is not None:
        undispatched = undispatched.filter(pk__in=list(event_ids))
    events = list(undispatched.select_for_update(skip_locked=True).order_by("created_at", "pk")[:DISPATCH_BATCH])
    if not events:
        return []
    endpoint_ids = {endpoint_id for event in events for endpoint_id in event.endpoint_ids}
    existing = set(WebhookEndpoint.objects.filter(pk__in=endpoint_ids).values_list("pk", flat=True))
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
        WebhookDelivery.objects.filter(event__in=events, status=WebhookDelivery.Status.PENDING)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
