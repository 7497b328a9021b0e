"""Sending an event to an endpoint: claim the delivery (one sender at a time, for a lease), sign and POST it outside
any transaction, then record the answer: delivered on a 2xx, otherwise the next attempt on the retry schedule
(WEBHOOK_RETRY_SCHEDULE_SECONDS, over a day by default), or failed once it runs out. A sender that dies mid-send
leaves the delivery claimed until its lease passes, and the sweep hands it to another (docs/decisions/0043).

Delivery is at least once: an endpoint that answered but whose sender died before recording it gets the event again,
with the same webhook-id, which receivers use to ignore a repeat."""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from core.runtime.db import release_connection_while_waiting
from core.runtime.queueing import task_enqueue_safely
from webhooks import task_names
from webhooks.models import WebhookDelivery, WebhookEvent
from webhooks.services.outbound import WebhookSendError, webhook_post
from webhooks.services.signing import webhook_signature

USER_AGENT = "agent-memory-webhooks/1"
DUE_STATUSES = (WebhookDelivery.Status.PENDING, WebhookDelivery.Status.SENDING)


@dataclass(frozen=True)
class AttemptOutcome:
    status: str
    retry_in: float | None = None  # seconds until the next attempt, when one is scheduled


def webhook_body(event: WebhookEvent) -> bytes:
    """The request body: the Standard Webhooks envelope (type, timestamp, data), compact JSON."""
    envelope = {"type": event.event_type, "timestamp": event.created_at.isoformat(), "data": event.data}
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False).encode()


def webhook_headers(*, secret: str, message_id: str, body: bytes, timestamp: int) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": webhook_signature(secret=secret, message_id=message_id, timestamp=timestamp, body=body),
    }


def _claim(delivery_id: int) -> WebhookDelivery | None:
    """The delivery, claimed for a lease, if it is due and nobody holds it; None otherwise (delivered, failed, not due,
    or claimed by another sender, whose UPDATE this one waited for and then found no longer due)."""
    now = timezone.now()
    lease_end = now + timedelta(seconds=settings.WEBHOOK_DELIVERY_LEASE_SECONDS)
    claimed = WebhookDelivery.objects.filter(pk=delivery_id, status__in=DUE_STATUSES, next_attempt_at__lte=now).update(
        status=WebhookDelivery.Status.SENDING,
        next_attempt_at=lease_end,
        attempts=F("attempts") + 1,
        last_attempt_at=now,
    )
    if not claimed:
        return None
    return WebhookDelivery.objects.select_related("event", "endpoint").get(pk=delivery_id)


def _retry_in(attempts: int) -> float | None:
    """Seconds before attempt `attempts + 1` (with ±20% jitter, so that a receiver back up is not hit by every retry at
    once), or None when the schedule has run out."""
    schedule = settings.WEBHOOK_RETRY_SCHEDULE_SECONDS
    if attempts > len(schedule):
        return None
    return float(schedule[attempts - 1]) * random.uniform(0.8, 1.2)


def webhook_delivery_attempt(*, delivery_id: int) -> AttemptOutcome | None:
    """One attempt of a due delivery; None when it was not due or another sender holds it."""
    delivery = _claim(delivery_id)
    if delivery is None:
        return None
    endpoint, event = delivery.endpoint, delivery.event
    if not endpoint.is_active:
        return _record(delivery, status_code=None, error="the endpoint is inactive", retry=False)
    body = webhook_body(event)
    headers = webhook_headers(
        secret=endpoint.secret, message_id=event.message_id, body=body, timestamp=int(time.time())
    )
    release_connection_while_waiting()
    try:
        answer = webhook_post(url=endpoint.url, headers=headers, body=body, timeout=settings.WEBHOOK_TIMEOUT_SECONDS)
    except WebhookSendError as error:
        return _record(delivery, status_code=None, error=str(error), retry=True)
    if 200 <= answer.status < 300:
        return _record(delivery, status_code=answer.status, error="", retry=False)
    detail = " (redirects are not followed)" if 300 <= answer.status < 400 else ""
    return _record(
        delivery, status_code=answer.status, error=f"HTTP {answer.status}{detail}: {answer.body}", retry=True
    )


def _record(delivery: WebhookDelivery, *, status_code: int | None, error: str, retry: bool) -> AttemptOutcome:
    now = timezone.now()
    changes: dict = {"last_status_code": status_code, "last_error": error[:2000]}
    retry_in = _retry_in(delivery.attempts) if retry else None
    if not error:
        outcome = AttemptOutcome(status=WebhookDelivery.Status.DELIVERED)
        changes |= {"status": outcome.status, "delivered_at": now}
    elif retry_in is not None:
        outcome = AttemptOutcome(status=WebhookDelivery.Status.PENDING, retry_in=retry_in)
        changes |= {"status": outcome.status, "next_attempt_at": now + timedelta(seconds=retry_in)}
    else:
        outcome = AttemptOutcome(status=WebhookDelivery.Status.FAILED)
        changes |= {"status": outcome.status}
    WebhookDelivery.objects.filter(pk=delivery.pk).update(**changes)
    return outcome


def webhook_deliveries_due(*, limit: int) -> list[int]:
    """Deliveries due now: pending ones whose time has come, and claimed ones whose sender's lease has passed."""
    return list(
        WebhookDelivery.objects.filter(status__in=DUE_STATUSES, next_attempt_at__lte=timezone.now())
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:limit]
    )


@transaction.atomic
def webhook_deliveries_redeliver(*, delivery_ids: list[int]) -> int:
    """Send these deliveries again, now, with a fresh retry schedule (an operator's redeliver): delivered and failed
    ones too. Returns how many."""
    changed = WebhookDelivery.objects.filter(pk__in=delivery_ids).update(
        status=WebhookDelivery.Status.PENDING, attempts=0, next_attempt_at=timezone.now(), last_error=""
    )
    ids = list(delivery_ids)
    transaction.on_commit(lambda: task_enqueue_safely(task_names.DELIVER, ids))
    return changed


def webhook_events_undispatched(*, older_than_seconds: float, limit: int) -> list[int]:
    """Events committed a while ago whose dispatch never ran (its hand-over was lost): the sweep's to queue."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    return list(
        WebhookEvent.objects.filter(dispatched_at__isnull=True, created_at__lt=cutoff)
        .order_by("created_at")
        .values_list("pk", flat=True)[:limit]
    )


def webhook_events_prune() -> int:
    """Events older than WEBHOOK_EVENT_RETENTION_DAYS whose every delivery is settled (delivered or failed), with
    their delivery log. Returns the events deleted."""
    cutoff = timezone.now() - timedelta(days=settings.WEBHOOK_EVENT_RETENTION_DAYS)
    unsettled = Q(deliveries__status__in=DUE_STATUSES)
    old = list(
        WebhookEvent.objects.filter(created_at__lt=cutoff, dispatched_at__isnull=False)
        .exclude(unsettled)
        .values_list("pk", flat=True)[:10_000]
    )
    _, per_model = WebhookEvent.objects.filter(pk__in=old).delete()
    return per_model.get(WebhookEvent._meta.label, 0)
