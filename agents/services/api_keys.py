"""API keys: created once (the raw key is returned only then), stored as a SHA-256 digest, revocable."""

from __future__ import annotations

import copy
import hashlib
import secrets
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from agents.models import Agent, AgentAPIKey
from core.runtime.request_path_cache import ProcessCache

KEY_PREFIX = "mem_"
_LAST_USED_RESOLUTION = timedelta(minutes=1)
# Live keys by digest, with their agent (agents/signals.py invalidates on any write to either).
_live_keys: ProcessCache[AgentAPIKey] = ProcessCache(max_entries=2_000)


def api_key_digest(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


@transaction.atomic
def api_key_create(*, agent: Agent, name: str = "") -> tuple[AgentAPIKey, str]:
    """Returns the stored key and the raw key, which is never stored and cannot be shown again."""
    raw_key = KEY_PREFIX + secrets.token_urlsafe(32)
    api_key = AgentAPIKey.objects.create(
        agent=agent, name=name, prefix=raw_key[: len(KEY_PREFIX) + 8], key_digest=api_key_digest(raw_key)
    )
    return api_key, raw_key


def api_key_revoke(*, api_key: AgentAPIKey) -> AgentAPIKey:
    if api_key.revoked_at is None:
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at"])
    return api_key


def _live_key_read(*, key_digest: str) -> AgentAPIKey | None:
    return AgentAPIKey.objects.select_related("agent").filter(key_digest=key_digest, revoked_at__isnull=True).first()


def _detached(api_key: AgentAPIKey) -> AgentAPIKey:
    """A copy a request may change (the cached instance is shared by the process's threads)."""
    detached = copy.copy(api_key)
    detached.agent = copy.copy(api_key.agent)
    return detached


def api_key_authenticate(*, raw_key: str) -> AgentAPIKey | None:
    """The live key matching raw_key, or None. Records use at most once a minute per process (no write per
    request)."""
    key_digest = api_key_digest(raw_key)
    cached = _live_keys.get_or_load(key=key_digest, load=lambda: _live_key_read(key_digest=key_digest))
    if cached is None:
        return None
    api_key = _detached(cached)
    now = timezone.now()
    if api_key.last_used_at is None or now - api_key.last_used_at > _LAST_USED_RESOLUTION:
        AgentAPIKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        api_key.last_used_at = now
        _live_keys.replace(key=key_digest, value=_detached(api_key))
    return api_key
