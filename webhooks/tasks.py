from celery import shared_task
from django.conf import settings

from webhooks import task_names
from webhooks.models import WebhookDelivery
from webhooks.services.delivery import webhook_deliveries_due, webhook_delivery_attempt, webhook_events_prune

# Chunks the sweep queues deliveries in: each task sends its deliveries one after the other.
SWEEP_CHUNK = 20


@shared_task(name=task_names.DELIVER, acks_late=True)
def webhooks_deliver_task(delivery_ids: list[int]) -> int:
    """Attempt each due delivery once. A retry due soon (within WEBHOOK_REQUEUE_MAX_SECONDS) is queued with its
    countdown; later ones, and any this task could not queue, wait for the sweep. Idempotent: a delivery not due, or
    claimed by another sender, is skipped. Returns how many were delivered."""
    delivered = 0
    for delivery_id in delivery_ids:
        outcome = webhook_delivery_attempt(delivery_id=delivery_id)
        if outcome is None:
            continue
        delivered += outcome.status == WebhookDelivery.Status.DELIVERED
        if outcome.retry_in is not None and outcome.retry_in <= settings.WEBHOOK_REQUEUE_MAX_SECONDS:
            webhooks_deliver_task.apply_async(args=([delivery_id],), countdown=outcome.retry_in, ignore_result=True)
    return delivered


@shared_task(name="webhooks.sweep_deliveries")
def webhooks_sweep_task() -> int:
    """Beat (webhooks-sweep): queue the deliveries that are due, whatever queued them before or failed to. Returns
    how many were queued."""
    due = webhook_deliveries_due(limit=2000)
    for start in range(0, len(due), SWEEP_CHUNK):
        webhooks_deliver_task.apply_async(args=(due[start : start + SWEEP_CHUNK],), ignore_result=True)
    return len(due)


@shared_task(name="webhooks.prune_events")
def webhooks_prune_task() -> int:
    """Beat (webhooks-prune): settled events past WEBHOOK_EVENT_RETENTION_DAYS, with their delivery log."""
    return webhook_events_prune()
