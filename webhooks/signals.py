"""Invalidate the per-process subscriptions (webhooks/services/events.py) on every write to an endpoint, whoever writes
it (the administration API, the console). Connected in WebhooksConfig.ready()."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from core.runtime.request_path_cache import request_path_caches_invalidate
from webhooks.models import WebhookEndpoint


@receiver(post_save, sender=WebhookEndpoint, dispatch_uid="webhook_endpoint_saved_invalidates_subscriptions")
@receiver(post_delete, sender=WebhookEndpoint, dispatch_uid="webhook_endpoint_deleted_invalidates_subscriptions")
def webhook_endpoint_changed(sender: type, **kwargs: Any) -> None:
    request_path_caches_invalidate(using=kwargs.get("using"))
