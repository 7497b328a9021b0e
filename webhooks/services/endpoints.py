"""An agent's webhook endpoints, as the administration API and the console set them: the URL checked (a public host
over https, resolvable now), the event types known, the secret generated unless given. Errors name the field."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction

from agents.models import Agent
from core.exceptions import ApplicationError
from webhooks.models import WebhookEndpoint, WebhookEventType
from webhooks.services.outbound import WebhookUrlRefused, webhook_url_check
from webhooks.services.signing import webhook_secret_key, webhook_secret_new

URL_MAX_LENGTH = 2000


def webhook_url_validate(url: str) -> str:
    url = url.strip()
    if len(url) > URL_MAX_LENGTH:
        raise ApplicationError(f"the URL is longer than {URL_MAX_LENGTH} characters.", fields={"url": ["too long"]})
    try:
        webhook_url_check(url)
    except WebhookUrlRefused as refused:
        raise ApplicationError(f"url: {refused}", fields={"url": [str(refused)]}) from refused
    return url


def webhook_event_types_validate(event_types: Sequence[str]) -> list[str]:
    unknown = sorted(set(event_types) - set(WebhookEventType.values))
    if unknown:
        raise ApplicationError(
            f"unknown event type(s): {', '.join(unknown)}; the types are {', '.join(WebhookEventType.values)}.",
            fields={"event_types": [f"unknown: {', '.join(unknown)}"]},
        )
    if not event_types:
        raise ApplicationError("an endpoint receives at least one event type.", fields={"event_types": ["empty"]})
    return [event_type for event_type in WebhookEventType.values if event_type in set(event_types)]


def webhook_secret_validate(secret: str) -> str:
    try:
        webhook_secret_key(secret)
    except ValueError as error:
        raise ApplicationError(f"secret: {error}.", fields={"secret": [str(error)]}) from error
    return secret


@transaction.atomic
def webhook_endpoint_create(
    *,
    agent: Agent,
    url: str,
    event_types: Sequence[str] | None = None,
    description: str = "",
    secret: str | None = None,
    is_active: bool = True,
) -> WebhookEndpoint:
    """A new endpoint; every event type when none is given, a new secret unless one is given."""
    return WebhookEndpoint.objects.create(
        agent=agent,
        url=webhook_url_validate(url),
        event_types=webhook_event_types_validate(WebhookEventType.values if event_types is None else event_types),
        description=description,
        secret=webhook_secret_validate(secret) if secret is not None else webhook_secret_new(),
        is_active=is_active,
    )


@transaction.atomic
def webhook_endpoint_update(
    *,
    endpoint: WebhookEndpoint,
    url: str | None = None,
    event_types: Sequence[str] | None = None,
    description: str | None = None,
    secret: str | None = None,
    rotate_secret: bool = False,
    is_active: bool | None = None,
) -> WebhookEndpoint:
    """Change what is given; `rotate_secret` replaces the secret with a new one. Everything is checked first, so a
    refused change stores nothing."""
    changes: dict = {}
    if url is not None:
        changes["url"] = webhook_url_validate(url)
    if event_types is not None:
        changes["event_types"] = webhook_event_types_validate(event_types)
    if secret is not None:
        changes["secret"] = webhook_secret_validate(secret)
    elif rotate_secret:
        changes["secret"] = webhook_secret_new()
    if description is not None:
        changes["description"] = description
    if is_active is not None:
        changes["is_active"] = is_active
    for name, value in changes.items():
        setattr(endpoint, name, value)
    if changes:
        endpoint.save(update_fields=[*changes, "updated_at"])
    return endpoint
