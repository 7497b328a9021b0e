"""Turn-level retrieval: past messages that answer a query, by vector similarity, BM25 full-text, or both fused.

Messages are indexed as `message_search_text` renders them (conversations.services.message_embeddings): the message
with its speaker, after the previous message of its session. Vectors are embedded from that text; full-text search
renders the same text in SQL (`_SEARCH_TEXT_SQL`) and parses it on the fly in the `english` configuration."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db.models import QuerySet
from pgvector.django import CosineDistance

from conversations.models import Agent, EndUser, Message, MessageEmbedding, Session
from core.embeddings.spaces import embedding_expression, embedding_provider_for_space, embedding_space_active
from core.exceptions import ApplicationError
from core.retrieval import bm25_ranking, query_embedding_start, reciprocal_rank_fusion

TOP_K_MAX = 100
TEXT_SEARCH_CONFIG = "english"
SEARCH_MODES = ("hybrid", "semantic", "text")
# Each signal ranks this many candidates per requested result (at least MIN_CANDIDATES) before fusion.
CANDIDATES_PER_RESULT = 4
MIN_CANDIDATES = 40

# message_search_text in SQL: "<previous speaker>: <previous content>\n<speaker>: <content>".
_SPEAKER_SQL = "coalesce(nullif({t}.metadata->>'speaker', ''), nullif({t}.metadata->>'name', ''), {t}.role)"
_SEARCH_TEXT_SQL = (
    "coalesce("
    + _SPEAKER_SQL.format(t="previous")
    + " || ': ' || previous.content || E'\\n', '') || "
    + _SPEAKER_SQL.format(t="message")
    + " || ': ' || message.content"
)


@dataclass(frozen=True)
class MessageHit:
    message: Message
    similarity: float | None
    session_external_id: str
    score: float = 0.0
    vector_rank: int | None = None
    text_rank: int | None = None


def _searchable_embeddings(
    *, space, agent: Agent, user: EndUser, session: Session | None, exclude_message_ids: Collection[int]
) -> QuerySet[MessageEmbedding]:
    """The user's message vectors (one session's when given). The filter is on the embedding rows' own user column,
    so PostgreSQL reads one user's vectors through the (space, user) index and scans them exactly, rather than
    searching the agent-wide HNSW graph."""
    candidates = MessageEmbedding.objects.filter(space=space, agent=agent, user=user)
    if session is not None:
        candidates = candidates.filter(session=session)
    if exclude_message_ids:
        candidates = candidates.exclude(message_id__in=list(exclude_message_ids))
    return candidates


def _vector_ranking(
    candidates: QuerySet[MessageEmbedding], *, space, vector: np.ndarray, limit: int, min_similarity: float | None
) -> list[tuple[int, float]]:
    """(message id, cosine similarity), most similar first."""
    ranked = candidates.annotate(distance=CosineDistance(embedding_expression(space=space), vector))
    if min_similarity is not None:
        ranked = ranked.filter(distance__lte=1 - min_similarity)
    return [
        (pk, 1.0 - distance)
        for pk, distance in ranked.order_by("distance").values_list("message_id", "distance")[:limit]
    ]


def _text_ranking(
    *,
    agent: Agent,
    user: EndUser,
    session: Session | None,
    exclude_message_ids: Collection[int],
    query: str,
    limit: int,
) -> list[tuple[int, float]]:
    """(message id, BM25 score) of the user's messages (one session's when given) matching any query word."""
    conditions = ["session.agent_id = %s", "session.user_id = %s"]
    params: list = [agent.pk, user.pk]
    if session is not None:
        conditions.append("session.id = %s")
        params.append(session.pk)
    if exclude_message_ids:
        conditions.append("NOT (message.id = ANY(%s))")
        params.append(list(exclude_message_ids))
    scope_sql = f"""
        SELECT message.id, to_tsvector('{TEXT_SEARCH_CONFIG}', {_SEARCH_TEXT_SQL}) AS tsv
        FROM {Message._meta.db_table} AS message
        JOIN {Session._meta.db_table} AS session ON session.id = message.session_id
        LEFT JOIN LATERAL (
            SELECT before.content, before.role, before.metadata FROM {Message._meta.db_table} AS before
            WHERE before.session_id = message.session_id AND before.id < message.id
            ORDER BY before.id DESC LIMIT 1
        ) AS previous ON true
        WHERE {" AND ".join(conditions)}
    """
    return bm25_ranking(scope_sql=scope_sql, scope_params=params, query=query, config=TEXT_SEARCH_CONFIG, limit=limit)


def messages_search(
    *,
    agent: Agent,
    user: EndUser | None,
    query: str,
    session: Session | None = None,
    top_k: int = 10,
    mode: str = "hybrid",
    min_similarity: float | None = None,
    exclude_message_ids: Collection[int] = (),
) -> list[MessageHit]:
    """The user's past messages (one session's when `session` is given) that best answer `query`: vector similarity
    (`semantic`), BM25 full-text (`text`), or both fused with weighted reciprocal rank fusion (`hybrid`, k =
    MEMORY_RRF_K, full-text weight MEMORY_TEXT_WEIGHT). Without a user, nothing: messages are never shared across
    users. `min_similarity` drops vector candidates below it; full-text matches stay."""
    errors = {}
    if not query.strip():
        errors["query"] = ["must not be empty"]
    if not 1 <= top_k <= TOP_K_MAX:
        errors["top_k"] = [f"must be between 1 and {TOP_K_MAX}"]
    if mode not in SEARCH_MODES:
        errors["mode"] = [f"must be one of {', '.join(SEARCH_MODES)}"]
    if errors:
        raise ApplicationError(f"Invalid search: {', '.join(errors)}.", fields=errors)
    if user is None:
        return []
    space = embedding_space_active()
    limit = max(top_k * CANDIDATES_PER_RESULT, MIN_CANDIDATES)
    embedding = (
        query_embedding_start(provider=embedding_provider_for_space(space=space), text=query)
        if mode != "text"
        else None
    )
    text_rows: list[tuple[int, float, float]] = []
    if mode != "semantic":
        text_rows = _text_ranking(
            agent=agent, user=user, session=session, exclude_message_ids=exclude_message_ids, query=query, limit=limit
        )
    vector_rows: list[tuple[int, float]] = []
    if embedding is not None:
        candidates = _searchable_embeddings(
            space=space, agent=agent, user=user, session=session, exclude_message_ids=exclude_message_ids
        )
        vector_rows = _vector_ranking(
            candidates, space=space, vector=embedding.result(), limit=limit, min_similarity=min_similarity
        )
    similarity = dict(vector_rows)
    vector_rank = {pk: rank for rank, (pk, _) in enumerate(vector_rows, start=1)}
    text_rank = {pk: rank for rank, (pk, _, _) in enumerate(text_rows, start=1)}
    strength = {pk: share for pk, _, share in text_rows}
    signals = []  # (ranks, weight, strengths) of each signal used
    if mode != "text":
        signals.append((vector_rank, 1.0, {}))
    if mode != "semantic":
        signals.append((text_rank, settings.MEMORY_TEXT_WEIGHT, strength))
    scores = {
        pk: reciprocal_rank_fusion(
            ranks=[ranks.get(pk) for ranks, _, _ in signals],
            weights=[weight for _, weight, _ in signals],
            strengths=[strengths.get(pk, 1.0) for _, _, strengths in signals],
            k=settings.MEMORY_RRF_K,
        )
        for pk in {*vector_rank, *text_rank}
    }
    best = sorted(scores, key=lambda pk: (-scores[pk], -pk))[:top_k]
    messages = Message.objects.select_related("session").in_bulk(best)
    return [
        MessageHit(
            message=messages[pk],
            similarity=similarity.get(pk),
            session_external_id=messages[pk].session.external_id,
            score=scores[pk],
            vector_rank=vector_rank.get(pk),
            text_rank=text_rank.get(pk),
        )
        for pk in best
    ]


def messages_search_similar(
    *,
    agent: Agent,
    user: EndUser | None,
    session: Session | None,
    query: str,
    top_k: int = 5,
    min_similarity: float | None = None,
    exclude_message_ids: Collection[int] = (),
) -> list[MessageHit]:
    """For the memory bundle: within the session; across all of the user's sessions while the session is young (fewer
    than MESSAGE_SEARCH_WIDEN_BELOW_MESSAGES messages), when the session alone holds too little to recall from.
    Without a session, the user's sessions; without a user either, nothing (messages are never shared across users).
    Vector similarity only, so that `min_similarity` bounds every result."""
    if user is None or top_k <= 0 or not query.strip():
        return []
    within = (
        session
        if session is not None and session.message_count >= settings.MESSAGE_SEARCH_WIDEN_BELOW_MESSAGES
        else None
    )
    return messages_search(
        agent=agent,
        user=user,
        query=query,
        session=within,
        top_k=min(top_k, TOP_K_MAX),
        mode="semantic",
        min_similarity=min_similarity,
        exclude_message_ids=exclude_message_ids,
    )
