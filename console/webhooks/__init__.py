"""Webhooks in the console: each agent's endpoints (saved through webhooks.services.endpoints, so the URL is checked as
the administration API checks it), the events of the outbox and the delivery log (status, attempts, last error), with
redelivery."""

from console.webhooks.webhooks import WebhookDeliveryAdmin, WebhookEndpointAdmin, WebhookEventAdmin

__all__ = ["WebhookDeliveryAdmin", "WebhookEndpointAdmin", "WebhookEventAdmin"]
