"""Webhooks: each agent's endpoints (a URL, a signing secret, the event types it wants), the outbox of events written in
the same transaction as the change they report, and one delivery per event and endpoint, with its attempts.

An event is a row before it is a request: it exists only if the transaction that made the change committed, and a
worker that dies before or while sending leaves its delivery pending for the next attempt (docs/decisions/0043)."""

from __future__ import annotations

import uuid

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.utils import timezone

from agents.models import Agent, EndUser


class WebhookEventType(models.TextChoices):
    FACT_CREATED = "fact.created", "a fact was created"
    FACT_UPDATED = "fact.updated", "a fact was changed (a new version supersedes the old one)"
    FACT_CLOSED = "fact.closed", "a fact was closed (deleted, kept as history)"
    FACT_ERASED = "fact.erased", "a fact was erased with its whole history"
    FORMATION_COMPLETED = "formation.completed", "formation completed for a session"
    FORMATION_FAILED = "formation.failed", "formation failed for a session"
    REVIEW_PENDING = "review.pending", "memory is waiting for an operator's review"
    USER_ERASED = "user.erased", "an end user was erased"


def message_id_new() -> str:
    """The Standard Webhooks message id (the webhook-id header): the same for every attempt of one event."""
    return f"msg_{uuid.uuid4().hex}"


class WebhookEndpoint(models.Model):
    """Where an agent's events go. The secret signs every request (Standard Webhooks: `whsec_` and base64 bytes)."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="webhook_endpoints")
    url = models.URLField(max_length=2000, help_text="https://, on a public address (docs/security.md).")
    description = models.CharField(max_length=300, blank=True)
    secret = models.CharField(max_length=200, help_text="whsec_ and the base64 of the signing key.")
    event_types = ArrayField(
        models.CharField(max_length=40, choices=WebhookEventType.choices),
        help_text="The events sent to this endpoint.",
    )
    is_active = models.BooleanField(default=True, help_text="Inactive: no new event is sent to it.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "webhook endpoint"
        indexes = [models.Index(fields=["agent"], condition=Q(is_active=True), name="webhookendpoint_active")]

    def __str__(self) -> str:
        return self.url


class WebhookEvent(models.Model):
    """One change to report, written in the transaction that made it (the outbox), with the endpoints that wanted it
    then; a worker turns it into one delivery per endpoint (`dispatched_at`). `user` is the end user it concerns, so
    that erasing the user erases what the outbox holds about them."""

    message_id = models.CharField(max_length=40, unique=True, default=message_id_new)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    event_type = models.CharField(max_length=40, choices=WebhookEventType.choices)
    data = models.JSONField(help_text="The event's `data`, as sent.")
    endpoint_ids = ArrayField(models.BigIntegerField(), help_text="The endpoints that wanted it when it happened.")
    created_at = models.DateTimeField(default=timezone.now)
    dispatched_at = models.DateTimeField(null=True, blank=True, help_text="When its deliveries were made.")

    class Meta:
        verbose_name = "webhook event"
        indexes = [
            models.Index(fields=["created_at"], name="webhookevent_created"),
            # The sweep's read: events whose dispatch after commit was lost.
            models.Index(
                fields=["created_at"], condition=Q(dispatched_at__isnull=True), name="webhookevent_undispatched"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} {self.message_id}"


class WebhookDelivery(models.Model):
    """One event to one endpoint: pending until a 2xx answer (delivered) or until the retry schedule runs out
    (failed; an operator may redeliver). A worker claims it while it sends (status sending, `next_attempt_at` moved
    to the end of its lease): one that dies mid-send leaves it to be claimed again once the lease has passed."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        SENDING = "sending", "sending"
        DELIVERED = "delivered", "delivered"
        FAILED = "failed", "failed (retries exhausted)"

    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="deliveries")
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "webhook delivery"
        verbose_name_plural = "webhook deliveries"
        constraints = [models.UniqueConstraint(fields=["event", "endpoint"], name="webhookdelivery_unique")]
        indexes = [
            # The sweep's read: what is due, and what a dead worker left claimed past its lease.
            models.Index(
                fields=["next_attempt_at"], condition=Q(status__in=["pending", "sending"]), name="webhookdelivery_due"
            ),
            models.Index(fields=["endpoint", "-id"], name="webhookdelivery_endpoint"),
        ]

    def __str__(self) -> str:
        return f"{self.event} to {self.endpoint} ({self.status})"
