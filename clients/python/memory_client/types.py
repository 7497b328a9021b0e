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


class WorldTime(TypedDict):
    """When a statement held in the world (not when memory recorded it). A precision is day, month (the date is the
    month's first day), year (January 1st) or approximate; an end's may be "unknown" (it ended, when is not known;
    `end` None); "" with no such bound known."""

    start: str | None
    start_precision: str
    end: str | None
    end_precision: str
    holds_now: bool


class WorldTimeIn(TypedDict, total=False):
    """World time as a client gives it: a date written YYYY, YYYY-MM or YYYY-MM-DD (its precision follows unless
    given); end_precision "unknown" without an end: it ended, when unknown."""

    start: str | None
    start_precision: str
    end: str | None
    end_precision: str


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
    world_time: WorldTime
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


class EntityReference(TypedDict):
    id: int
    name: str
    entity_type: str


class Entity(TypedDict):
    id: int
    user: str | None
    name: str
    entity_type: str  # person, place, organisation, thing, event, other
    aliases: list[str]
    is_user: bool
    merged_into: int | None
    created_at: str
    updated_at: str


class Relation(TypedDict):
    id: int
    subject: EntityReference
    predicate: str
    object_entity: EntityReference | None
    object_value: str
    valid_from: str
    valid_to: str | None
    is_current: bool
    world_time: WorldTime
    closed_reason: str
    formed_at: str
    source_facts: list[int]
    source_messages: list[int]


class EntityDetail(TypedDict):
    entity: Entity
    relations: list[Relation]
    facts: list[Fact]


class TimelineFact(TypedDict):
    id: int
    content: str
    version: int
    lineage: str
    is_current: bool
    scopes: list[Literal["user", "agent"]]
    user: str | None
    key: str


class TimelineMessage(TypedDict):
    id: int
    session: str
    said_at: str


class TimelineEntry(TypedDict):
    """One change, placed by when it happened in the world (placed_by "start" or "end"), or by the day memory
    recorded it when that is unknown ("recorded")."""

    happened: Literal["started", "ended", "corrected"]
    at: str
    placed_by: Literal["start", "end", "recorded"]
    recorded_at: str
    reason: str
    fact: TimelineFact
    world_time: WorldTime
    source_messages: list[TimelineMessage]
