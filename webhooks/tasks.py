from celery import shared_task
from django.conf import settings

from webhooks import task_names
from webhooks.models import WebhookDelivery
from webhooks.services.delivery import (
    webhook_deliveries_due,
    webhook_delivery_attempt,
    webhook_events_prune,
    webhook_events_undispatched,
)
from webhooks.services.events import webhook_events_dispatch

# Chunks the sweep queues deliveries and events in: each task sends its deliveries one after the other.
SWEEP_CHUNK = 20
# An event not dispatched this long after it was written lost its hand-over (the process that wrote it went away).
UNDISPATCHED_AFTER_SECONDS = 10.0


def _attempt_each(delivery_ids: list[int]) -> int:
    """Attempt each due delivery once. A retry due soon (within WEBHOOK_REQUEUE_MAX_SECONDS) is queued with its
    countdown; later ones, and any not queued, wait for the sweep. Returns how many were delivered."""
    delivered = 0
    for delivery_id in delivery_ids:
        outcome = webhook_delivery_attempt(delivery_id=delivery_id)
        if outcome is None:
            continue
        delivered += outcome.status == WebhookDelivery.Status.DELIVERED
        if outcome.retry_in is not None and outcome.retry_in <= settings.WEBHOOK_REQUEUE_MAX_SECONDS:
            webhooks_deliver_task.apply_async(args=([delivery_id],), countdown=outcome.retry_in, ignore_result=True)
    return delivered


@shared_task(name=task_names.DISPATCH, acks_late=True)
def webhooks_dispatch_task(event_ids: list[int]) -> int:
    """Committed events: one delivery per endpoint that wanted each, then their first attempt. Idempotent: events
    dispatched already make no delivery twice, and a delivery not due or claimed by another sender is skipped."""
    return _attempt_each(webhook_events_dispatch(event_ids=event_ids))


@shared_task(name=task_names.DELIVER, acks_late=True)
def webhooks_deliver_task(delivery_ids: list[int]) -> int:
    """Attempt each due delivery once (retries, redeliveries, what the sweep found due). Idempotent as above."""
    return _attempt_each(delivery_ids)


@shared_task(name="webhooks.sweep_deliveries")
def webhooks_sweep_task() -> int:
    """Beat (webhooks-sweep): queue the events whose dispatch was lost and the deliveries that are due, whatever
    queued them before or failed to. Returns how many were queued."""
    events = webhook_events_undispatched(older_than_seconds=UNDISPATCHED_AFTER_SECONDS, limit=2000)
    for start in range(0, len(events), SWEEP_CHUNK):
        webhooks_dispatch_task.apply_async(args=(events[start : start + SWEEP_CHUNK],), ignore_result=True)
    due = webhook_deliveries_due(limit=2000)
    for start in range(0, len(due), SWEEP_CHUNK):
        webhooks_deliver_task.apply_async(args=(due[start : start + SWEEP_CHUNK],), ignore_result=True)
    return len(events) + len(due)


@shared_task(name="webhooks.prune_events")
def webhooks_prune_task() -> int:
    """Beat (webhooks-prune): settled events past WEBHOOK_EVENT_RETENTION_DAYS, with their delivery log."""
    return webhook_events_prune()
