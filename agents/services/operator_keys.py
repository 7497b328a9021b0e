"""Operator keys, the administration API's credential: created once (the raw key is returned only then), stored as a
SHA-256 digest, revocable. Told apart from agent keys by their prefix, so that either kind sent to the other's API is
refused saying which it is."""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from agents.models import OperatorKey
from agents.services.api_keys import api_key_digest

OPERATOR_KEY_PREFIX = "mop_"
_LAST_USED_RESOLUTION = timedelta(minutes=1)


@transaction.atomic
def operator_key_create(*, name: str, created_by: str = "") -> tuple[OperatorKey, str]:
    """Returns the stored key and the raw key, which is never stored and cannot be shown again."""
    raw_key = OPERATOR_KEY_PREFIX + secrets.token_urlsafe(32)
    operator_key = OperatorKey.objects.create(
        name=name,
        created_by=created_by,
        prefix=raw_key[: len(OPERATOR_KEY_PREFIX) + 8],
        key_digest=api_key_digest(raw_key),
    )
    return operator_key, raw_key


def operator_key_revoke(*, operator_key: OperatorKey) -> OperatorKey:
    if operator_key.revoked_at is None:
        operator_key.revoked_at = timezone.now()
        operator_key.save(update_fields=["revoked_at"])
    return operator_key


def operator_key_authenticate(*, raw_key: str) -> OperatorKey | None:
    """The live key matching raw_key, or None. Records use at most once a minute."""
    operator_key = OperatorKey.objects.filter(key_digest=api_key_digest(raw_key), revoked_at__isnull=True).first()
    if operator_key is None:
        return None
    now = timezone.now()
    if operator_key.last_used_at is None or now - operator_key.last_used_at > _LAST_USED_RESOLUTION:
        OperatorKey.objects.filter(pk=operator_key.pk).update(last_used_at=now)
        operator_key.last_used_at = now
    return operator_key
