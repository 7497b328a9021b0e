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
    expires_at: str | None
    # The category it is filed under (a default's slug or the agent's own; "": formed before categories) and what it
    # says there, canonical for the person ("pottery" for "a pottery class").
    category: str
    category_value: str


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
    rerank_rank: int | None  # its place in the agent's reranker's order; None when not reranked
    rerank_score: float | None  # the rerank server's score; None from the LLM reranker
    reasons: list[str]  # why it was returned: "list:<category>" first for a list question's entries, then signals


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
    rerank_rank: int | None
    rerank_score: float | None
    reasons: list[str]  # why it was returned: "list:<category>" first for a list question's turns, then signals


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


class FactFeedback(TypedDict):
    id: int
    fact: int
    rating: Literal["useful", "wrong", "outdated", "harmful"]
    note: str
    user: str | None
    outcome: Literal["recorded", "closed", "pending_review"]
    created_at: str


class EndUserInfo(TypedDict):
    user: str
    metadata: dict[str, Any]
    created_at: str
    last_active_at: str


class UserMemoryCounts(TypedDict):
    current_facts: int
    closed_fact_versions: int
    fact_embeddings: int
    buffered_reflections: int
    absorbed_reflections: int
    blobs: int
    past_blob_versions: int
    sessions: int
    messages: int
    message_embeddings: int
    formation_jobs: int
    consolidation_jobs: int
    entities: int
    relations: int
    held_memories: int
    feedback: int


class UserDetail(EndUserInfo):
    memory: UserMemoryCounts


class ProfileFact(TypedDict):
    id: int
    content: str
    version: int
    recorded_at: str
    world_time: WorldTime


class ProfileEntry(TypedDict):
    """One value of a category: its source facts (newest first, at most five), how many facts say it, when it held in
    the world and when memory last recorded it."""

    value: str
    mentions: int
    last_mentioned: str
    world_time: WorldTime
    facts: list[ProfileFact]


class _ProfileCategoryRequired(TypedDict):
    category: str
    name: str
    entries: list[ProfileEntry]


class ProfileCategory(_ProfileCategoryRequired, total=False):
    history: list[ProfileEntry]  # with include_history: the entries that ended


class ProfileAttribute(TypedDict):
    key: str
    value: str
    memory_id: int


class Profile(TypedDict):
    """What memory holds of a user (or agent-wide, `user` None) by category, and the user's keyed attributes."""

    user: str | None
    categories: list[ProfileCategory]
    attributes: list[ProfileAttribute]
    truncated: bool


class ErasureRecord(TypedDict):
    id: int
    erased_at: str
    requested_by: str
    deleted_counts: dict[str, int]
    user_external_id_hash: str


class UserErasure(TypedDict):
    user: str
    already_erased: bool
    erasure: ErasureRecord


class SessionDeleted(TypedDict):
    session: str
    deleted_counts: dict[str, int]


# --- the administration API (MemoryAdminClient) ------------------------------------------------------------------


class MemoryCategorySetting(TypedDict, total=False):
    """One of an agent's own categories (AgentInfo.memory_categories): slug required, the rest optional."""

    slug: str
    name: str
    description: str
    examples: list[str]


class AgentInfo(TypedDict):
    agent: str
    name: str
    rag_enabled: bool
    always_in_context_enabled: bool
    profile_in_context: bool
    sensitive_data: str
    agent_memory_from_users: str
    reranker: str  # off, http or llm
    formation_msg_interval: int | None
    formation_token_interval: int | None
    cold_after_minutes: int | None
    min_messages_for_formation: int | None
    consolidation_threshold_agent: int | None
    consolidation_threshold_user: int | None
    consolidation_threshold_session: int | None
    blob_word_limit_agent: int | None
    blob_word_limit_user: int | None
    blob_word_limit_session: int | None
    max_current_facts_per_user: int | None
    max_current_facts_per_agent: int | None
    max_embedded_messages_per_session: int | None
    llm_daily_token_budget: int | None
    memory_categories: list[MemoryCategorySetting]
    default_categories_enabled: bool
    categories_never_remembered: list[str]
    extraction_instructions: str
    created_at: str
    updated_at: str


class APIKeyInfo(TypedDict):
    id: int
    prefix: str
    name: str
    created_at: str
    last_used_at: str | None
    revoked_at: str | None


class APIKeyCreated(APIKeyInfo):
    key: str


class WebhookEndpointInfo(TypedDict):
    id: int
    url: str
    description: str
    event_types: list[str]
    is_active: bool
    secret: str
    created_at: str
    updated_at: str


class WebhookDeliveryInfo(TypedDict):
    id: int
    event_type: str
    message_id: str
    event_created_at: str
    status: Literal["pending", "sending", "delivered", "failed"]
    attempts: int
    last_attempt_at: str | None
    last_status_code: int | None
    last_error: str
    next_attempt_at: str
    delivered_at: str | None
