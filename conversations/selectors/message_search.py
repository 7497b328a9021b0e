"""Turn-level retrieval: past messages that answer a query, by vector similarity, BM25 full-text, or both fused.

Both signals read the message's embedding row, which holds what was indexed for it (conversations.services.
message_embeddings: the message with its speaker, after the previous message of its session): its vector, and the
stored full-text vector of the same text, found through the (user, tsvector) GIN index. A message is searchable once
its embedding task has run, a few seconds after ingestion. Searches are within one user's messages: the vector signal
scans them exactly, and BM25 takes the user's corpus size and average length from the kept statistics."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db.models import QuerySet
from pgvector.django import CosineDistance

from conversations.models import Agent, EndUser, Message, MessageEmbedding, Session
from core.db_routers import search_reads
from core.embeddings.spaces import embedding_provider_for_space, embedding_space_active
from core.exceptions import ApplicationError
from core.retrieval import CorpusKey, bm25_ranking, query_embedding_start, reciprocal_rank_fusion
from core.timing import stage_timed

TOP_K_MAX = 100
SEARCH_MODES = ("hybrid", "semantic", "text")
CORPUS_MESSAGES = "messages"
# Each signal ranks this many candidates per requested result (at least MIN_CANDIDATES) before fusion.
CANDIDATES_PER_RESULT = 4
MIN_CANDIDATES = 40


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
    """The user's message rows (one session's when given), read through the (space, user) btree index."""
    candidates = MessageEmbedding.objects.filter(space=space, agent=agent, user=user)
    if session is not None:
        candidates = candidates.filter(session=session)
    if exclude_message_ids:
        candidates = candidates.exclude(message_id__in=list(exclude_message_ids))
    return candidates


def _vector_ranking(
    candidates: QuerySet[MessageEmbedding], *, vector: np.ndarray, limit: int, min_similarity: float | None
) -> list[tuple[int, float]]:
    """(message id, cosine similarity), most similar first: an exact scan of the candidates (the uncast column matches
    no vector index)."""
    ranked = candidates.annotate(distance=CosineDistance("embedding", vector))
    if min_similarity is not None:
        ranked = ranked.filter(distance__lte=1 - min_similarity)
    return [
        (pk, 1.0 - distance)
        for pk, distance in ranked.order_by("distance", "message_id").values_list("message_id", "distance")[:limit]
    ]


def _text_ranking(
    *,
    space,
    agent: Agent,
    user: EndUser,
    session: Session | None,
    exclude_message_ids: Collection[int],
    query: str,
    limit: int,
) -> list[tuple[int, float, float]]:
    """(message id, BM25 score, strength) of the user's messages (one session's when given) matching any query word.
    The ids are cast to bigint so that the GIN index's btree_gin int8 class applies."""
    conditions = [
        "embedding.user_id = %s::bigint",
        "embedding.space_id = %s::bigint",
        "embedding.agent_id = %s::bigint",
    ]
    params: list = [user.pk, space.pk, agent.pk]
    if session is not None:
        conditions.append("embedding.session_id = %s::bigint")
        params.append(session.pk)
    if exclude_message_ids:
        conditions.append("NOT (embedding.message_id = ANY(%s::bigint[]))")
        params.append(list(exclude_message_ids))
    matched_sql = (
        "SELECT embedding.message_id AS id, embedding.search_vector AS tsv "
        f"FROM {MessageEmbedding._meta.db_table} AS embedding, query "
        f"WHERE {' AND '.join(conditions)} AND embedding.search_vector @@ query.tsquery"
    )
    return bm25_ranking(
        corpora=[CorpusKey(corpus=CORPUS_MESSAGES, space_id=space.pk, scope_id=user.pk)],
        matched_sql=matched_sql,
        matched_params=params,
        query=query,
        limit=limit,
        count_repeats=True,  # a turn is indexed with the turn before it: repeats carry weight (bm25_ranking)
    )


@search_reads()
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
        with stage_timed("text_sql"):
            text_rows = _text_ranking(
                space=space,
                agent=agent,
                user=user,
                session=session,
                exclude_message_ids=exclude_message_ids,
                query=query,
                limit=limit,
            )
    vector_rows: list[tuple[int, float]] = []
    if embedding is not None:
        candidates = _searchable_embeddings(
            space=space, agent=agent, user=user, session=session, exclude_message_ids=exclude_message_ids
        )
        with stage_timed("embed_wait"):
            vector = embedding.result()
        with stage_timed("vector_sql"):
            vector_rows = _vector_ranking(candidates, vector=vector, limit=limit, min_similarity=min_similarity)
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
    with stage_timed("hits_sql"):
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
