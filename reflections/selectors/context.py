"""The always-in-context block: the consolidated blobs plus the recent unabsorbed reflections of the agent, the user
and the session, rendered as one XML-like block (and as JSON parts) that an agent puts in its prompt.

The block is cached per (agent, user, session) under `context_cache_key`, whose generations are bumped whenever a blob
or reflection of one of those scopes changes (reflections.signals), so a cache hit costs no database query. Its text
depends only on the memory itself (no timestamps, stable order), so prompt caches upstream stay warm too."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import F, Q, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from agents.models import Agent, EndUser
from conversations.models import Session
from core.exceptions import ApplicationError
from core.llm.tokens import count_tokens
from core.safety.fencing import MEMORY_NOTICE_BLOCK, memory_text_quote
from facts.selectors.profile import profile_sections, user_profile
from reflections.models import ConsolidatedMemory, MemoryScope, Reflection
from reflections.services.context_cache import context_cache_key

SCOPE_TAGS = {
    MemoryScope.AGENT: "AgentMemory",
    MemoryScope.USER: "UserMemory",
    MemoryScope.SESSION: "SessionMemory",
}


class MemoryContextDisabled(ApplicationError):
    status_code = 403
    code = "memory_context_disabled"

    def __init__(self) -> None:
        super().__init__("Always-in-context memory is switched off for this agent (always_in_context_enabled).")


@dataclass(frozen=True)
class MemoryContext:
    enabled: bool
    text: str
    parts: dict[str, Any] = field(default_factory=dict)
    token_count: int = 0
    etag: str = ""
    stale_at: datetime | None = None  # when a fact it shows expires: it must not be served from the cache after

    def blob_of(self, scope: str) -> str:
        part = self.parts.get(scope)
        return part["blob"] if part else ""


def _scopes_filter(*, user: EndUser | None, session: Session | None) -> Q:
    scopes = Q(scope=MemoryScope.AGENT)
    if user is not None:
        scopes |= Q(scope=MemoryScope.USER, user=user)
    if session is not None:
        scopes |= Q(scope=MemoryScope.SESSION, session=session)
    return scopes


def _scope_part_render(*, tag: str, part: dict[str, Any]) -> str:
    lines = [f"<{tag}>"]
    if part["blob"]:
        lines.append(memory_text_quote(part["blob"]))
    if part.get("profile") or part.get("categories"):
        lines.append("Profile:")
        lines.extend(
            f"- {memory_text_quote(key)}: {memory_text_quote(value)}" for key, value in part.get("profile", {}).items()
        )
        lines.extend(
            f"- {memory_text_quote(name)}: {'; '.join(memory_text_quote(value) for value in values)}"
            for name, values in part.get("categories", {}).items()
        )
    if part["recent_reflections"]:
        lines.append("Recent:")
        lines.extend(f"- {memory_text_quote(reflection['content'])}" for reflection in part["recent_reflections"])
    lines.append(f"</{tag}>")
    return "\n".join(lines)


def memory_context_render(*, parts: dict[str, Any]) -> str:
    """Empty scopes are left out, and a block with nothing in it is the empty string, so that callers can inject it
    unconditionally. The block opens with the standing notice that memory is data, not instructions
    (core.safety.fencing)."""
    sections = [
        _scope_part_render(tag=tag, part=parts[scope])
        for scope, tag in SCOPE_TAGS.items()
        if parts.get(scope)
        and (
            parts[scope]["blob"]
            or parts[scope]["recent_reflections"]
            or parts[scope].get("profile")
            or parts[scope].get("categories")
        )
    ]
    if not sections:
        return ""
    return "\n".join(["<MemoryContext>", MEMORY_NOTICE_BLOCK, *sections, "</MemoryContext>"])


def _profile_categories(*, agent: Agent, user: EndUser) -> dict[str, list[str]]:
    """The user's profile by category as the block shows it (category name → values, most recently mentioned
    first): capped at MEMORY_CONTEXT_PROFILE_PER_CATEGORY values a category and MEMORY_CONTEXT_PROFILE_ENTRIES in
    all, each value cut to PROFILE_VALUE_MAX_CHARS, so that the block stays small whatever memory holds. The keyed
    attributes stay the `profile` lines before them."""
    shown: dict[str, list[str]] = {}
    room = settings.MEMORY_CONTEXT_PROFILE_ENTRIES
    for section in profile_sections(agent=agent, user=user).sections:
        entries = section.entries[: min(room, settings.MEMORY_CONTEXT_PROFILE_PER_CATEGORY)]
        if entries:
            shown[section.name] = [_shortened(entry.value) for entry in entries]
            room -= len(entries)
    return shown


PROFILE_VALUE_MAX_CHARS = 120


def _shortened(value: str) -> str:
    value = " ".join(value.split())
    return value if len(value) <= PROFILE_VALUE_MAX_CHARS else value[: PROFILE_VALUE_MAX_CHARS - 1].rstrip() + "…"


def memory_context_build(*, agent: Agent, user: EndUser | None, session: Session | None) -> MemoryContext:
    """The block computed from the database, uncached: two queries, three with the user's profile."""
    if not agent.always_in_context_enabled:
        return MemoryContext(enabled=False, text="")
    scopes = _scopes_filter(user=user, session=session)
    parts: dict[str, Any] = {
        MemoryScope.AGENT.value: None,
        MemoryScope.USER.value: None,
        MemoryScope.SESSION.value: None,
    }
    present = [MemoryScope.AGENT] + ([MemoryScope.USER] if user else []) + ([MemoryScope.SESSION] if session else [])
    for scope in present:
        parts[scope.value] = {"blob": "", "blob_version": None, "recent_reflections": []}

    for blob in ConsolidatedMemory.objects.filter(scopes, agent=agent).only("scope", "content", "version"):
        parts[blob.scope].update(blob=blob.content.strip(), blob_version=blob.version)

    # Newest N per scope (a failing consolidation must not let the block grow without bound), shown oldest first.
    recent = (
        Reflection.objects.filter(scopes, agent=agent, absorbed=False)
        .annotate(
            recency_rank=Window(
                RowNumber(), partition_by=[F("scope")], order_by=[F("created_at").desc(), F("id").desc()]
            )
        )
        .filter(recency_rank__lte=settings.MEMORY_CONTEXT_RECENT_REFLECTIONS)
        .order_by("created_at", "id")
        .values("id", "scope", "content")
    )
    for reflection in recent:
        parts[reflection["scope"]]["recent_reflections"].append(
            {"id": reflection["id"], "content": reflection["content"].strip()}
        )

    stale_at = None
    if user is not None and agent.profile_in_context:
        profile = user_profile(agent=agent, user=user)
        parts[MemoryScope.USER.value]["profile"] = {key: entry.value for key, entry in profile.items()}
        stale_at = min((entry.expires_at for entry in profile.values() if entry.expires_at), default=None)
        if categories := _profile_categories(agent=agent, user=user):
            parts[MemoryScope.USER.value]["categories"] = categories

    text = memory_context_render(parts=parts)
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]
    return MemoryContext(
        enabled=True, text=text, parts=parts, token_count=count_tokens(text), etag=f'"{digest}"', stale_at=stale_at
    )


def _cache_key(*, agent: Agent, user: EndUser | None, session: Session | None) -> str:
    return context_cache_key(
        agent_id=agent.pk,
        user_id=user.pk if user else None,
        session_id=session.pk if session else None,
    )


def memory_context_get(*, agent: Agent, user: EndUser | None, session: Session | None) -> MemoryContext:
    """The block, from the cache when no memory of these scopes changed since it was computed."""
    if not agent.always_in_context_enabled:
        return MemoryContext(enabled=False, text="")
    key = _cache_key(agent=agent, user=user, session=session)
    cached = cache.get(key)
    if cached is not None:
        return MemoryContext(**cached)
    context = memory_context_build(agent=agent, user=user, session=session)
    _memory_context_store(key=key, context=context)
    return context


def memory_context_refresh(*, agent: Agent, user: EndUser | None, session: Session | None) -> MemoryContext:
    """Recompute and re-cache the block even on a hit: the periodic refresh also repairs a block that a write
    bypassing the model signals (a bulk update) left stale, and restarts its expiry."""
    key = _cache_key(agent=agent, user=user, session=session)
    context = memory_context_build(agent=agent, user=user, session=session)
    _memory_context_store(key=key, context=context)
    return context


def _memory_context_store(*, key: str, context: MemoryContext) -> None:
    """Cached for MEMORY_CONTEXT_CACHE_SECONDS, or until the first fact it shows expires."""
    timeout = settings.MEMORY_CONTEXT_CACHE_SECONDS
    if context.stale_at is not None:
        timeout = max(0, min(timeout, math.ceil((context.stale_at - timezone.now()).total_seconds())))
    if timeout <= 0:
        return
    cache.set(
        key,
        {
            "enabled": context.enabled,
            "text": context.text,
            "parts": context.parts,
            "token_count": context.token_count,
            "etag": context.etag,
        },
        timeout=timeout,
    )
