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


class Fact(TypedDict):
    id: int
    content: str
    scopes: list[Literal["user", "agent"]]
    user: str | None
    tags: list[str]
    metadata: dict[str, Any]
    lineage: str
    version: int
    is_current: bool
    formed_at: str
    valid_from: str
    valid_to: str | None
    change_reason: str
    closed_reason: str
    superseded_by: int | None
    source_session: str | None
    access_count: int
    last_accessed_at: str | None


class FactVersion(Fact):
    source_message_ids: list[int]
    closed_by_message_ids: list[int]


class FactHistory(TypedDict):
    lineage: str
    versions: list[FactVersion]


class FactHit(TypedDict):
    fact: Fact
    score: float
    similarity: float | None
    vector_rank: int | None
    text_rank: int | None
    text_score: float | None
    time_rank: int | None
    graph_rank: int | None


class SearchResults(TypedDict):
    results: list[FactHit]


class ToolCallResult(TypedDict, total=False):
    ok: bool
    result: Any
    error: str
    fields: dict[str, list[str]]  # when not ok: what is wrong with each argument, by its dotted path ("tags.0")


class MCPToolCallResult(TypedDict, total=False):
    ok: bool
    result: Any
    error: str
    fields: dict[str, list[str]]


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
    formation_status: str  # idle, queued, running, waiting, failed
    formation_waiting_reason: str  # agent_budget, global_budget, provider; "" unless waiting
    formation_waiting_detail: str
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


class MessageHit(TypedDict):
    message: StoredMessage
    session: str
    score: float
    similarity: float | None
    vector_rank: int | None
    text_rank: int | None
    time_rank: int | None
    neighbour_rank: int | None
    speaker_rank: int | None
    graph_rank: int | None


class MessageSearchResults(TypedDict):
    results: list[MessageHit]


class AppendResult(TypedDict):
    session: SessionInfo
    created_count: int
    messages: list[StoredMessage]


class FormationQueued(TypedDict):
    session: SessionInfo
    queued: bool
