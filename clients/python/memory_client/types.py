"""Shapes of the service's JSON responses (docs/api.md has examples of each)."""

from __future__ import annotations

from typing import Any, Literal, TypedDict


class RecentReflection(TypedDict):
    id: int
    content: str


class ScopePart(TypedDict):
    blob: str
    blob_version: int | None
    recent_reflections: list[RecentReflection]


class MemoryContextParts(TypedDict):
    agent: ScopePart
    user: ScopePart | None
    session: ScopePart | None


class MemoryContext(TypedDict):
    text: str
    parts: MemoryContextParts
    token_count: int
    etag: str


BundlePartStatus = Literal["included", "partial", "over_budget", "empty", "disabled", "in_context"]


class BundlePart(TypedDict):
    status: BundlePartStatus
    tokens: int
    token_limit: int
    text: str
    items: list[dict[str, Any]]
    omitted: int


class BundleParts(TypedDict):
    context: BundlePart
    session_summary: BundlePart
    recent_turns: BundlePart
    facts: BundlePart
    similar_messages: BundlePart


class MemoryBundle(TypedDict):
    query: str
    token_budget: int
    tokens_used: int
    text: str
    parts: BundleParts


class SessionInfo(TypedDict):
    session: str
    user: str
    started_at: str
    last_activity_at: str
    closed_at: str | None
    message_count: int
    token_count: int
    formation_status: str
    formed_through_message_id: int | None
    last_formed_at: str | None


class _MessageRequired(TypedDict):
    role: Literal["user", "assistant", "tool", "system", "other"]
    content: str


class MessageIn(_MessageRequired, total=False):
    created_at: str
    idempotency_key: str
    metadata: dict[str, Any]


class StoredMessage(TypedDict):
    id: int
    role: str
    content: str
    token_count: int
    created_at: str
    idempotency_key: str | None
    metadata: dict[str, Any]


class AppendResult(TypedDict):
    session: SessionInfo
    created_count: int
    messages: list[StoredMessage]


class FormationQueued(TypedDict):
    session: SessionInfo
    queued: bool
