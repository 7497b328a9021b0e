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
from webhooks.services.events import DISPATCH_BATCH, webhook_events_dispatch

# Chunks the sweep queues deliveries and events in: each task sends its deliveries one after the other.
SWEEP_CHUNK = 20
# An event not dispatched this long after it was written was not heard (no listener ran, or it was reconnecting).
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
def webhooks_dispatch_task() -> int:
    """The events not dispatched yet (the listener's wake-up, the sweep's catch-up): one delivery per endpoint that
    wanted each, queued in chunks for their first attempt, in parallel. Idempotent: a dispatched event makes nothing
    twice, and events another dispatch holds are left to it. Returns how many deliveries were made."""
    delivery_ids = webhook_events_dispatch()
    for start in range(0, len(delivery_ids), SWEEP_CHUNK):
        webhooks_deliver_task.apply_async(args=(delivery_ids[start : start + SWEEP_CHUNK],), ignore_result=True)
    return len(delivery_ids)


@shared_task(name=task_names.DELIVER, acks_late=True)
def webhooks_deliver_task(delivery_ids: list[int]) -> int:
    """Attempt each due delivery once (retries, redeliveries, what the sweep found due). Idempotent as above."""
    return _attempt_each(delivery_ids)


@shared_task(name="webhooks.sweep_deliveries")
def webhooks_sweep_task() -> int:
    """Beat (webhooks-sweep): queue the events whose dispatch was lost and the deliveries that are due, whatever
    queued them before or failed to. Returns how many were queued."""
    events = webhook_events_undispatched(older_than_seconds=UNDISPATCHED_AFTER_SECONDS, limit=2000)
    for _ in range(0, len(events), DISPATCH_BATCH):
        webhooks_dispatch_task.apply_async(ignore_result=True)
    due = webhook_deliveries_due(limit=2000)
    for start in range(0, len(due), SWEEP_CHUNK):
        webhooks_deliver_task.apply_async(args=(due[start : start + SWEEP_CHUNK],), ignore_result=True)
    return len(events) + len(due)


@shared_task(name="webhooks.prune_events")
def webhooks_prune_task() -> int:
    """Beat (webhooks-prune): settled events past WEBHOOK_EVENT_RETENTION_DAYS, with their delivery log."""
    return webhook_events_prune()
