"""Turn-level retrieval: past messages that answer a query, by vector similarity, BM25 full-text, or both fused.

Both signals read the message's embedding row, which holds what was indexed for it (conversations.services.
message_embeddings: the message with its speaker, after the previous message of its session): its vector, and the
stored full-text vector of the same text, found through the (user, tsvector) GIN index. A message is searchable once
its embedding task has run, a few seconds after ingestion. Searches are within one user's messages: the vector signal
scans them exactly, and BM25 takes the user's corpus size and average length from the kept statistics.

Four more signals are fused with them in hybrid mode (semantic and text are each one signal alone): graph, the turns
that the entity graph's relations about the entities the query names, or a relation or two from them, were formed
from (facts keeps the graph: the caller passes its ranking, facts.selectors.graph_search.messages_graph_ranking);
time, for a query that asks when something
happened or is about a period (the day each message was said, and the day its text names, MessageEmbedding.refers_to,
core.search.retrieval.time_ranking); neighbours, the turns just before and after
the best hits, which hold the answer as often as the hit itself (a reply, or the question it answers); and speaker, the
candidates said by the one speaker the query names ("What does Melanie paint?" is answered by what Melanie said).
Each hit says its rank in every signal. Weights and what was measured: core.search.retrieval and
docs/benchmarks/history.md."""

from __future__ import annotations

import re
from collections.abc import Collection
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import date, datetime
from typing import Protocol

import numpy as np
from django.conf import settings
from django.db.models import Q, QuerySet
from pgvector.django import CosineDistance

from agents.models import Agent, EndUser
from agents.selectors.reranking import agent_reranker
from conversations.models import Message, MessageEmbedding, Session
from conversations.selectors.message_screening import messages_screen_for_reading
from conversations.services.message_embeddings import message_speaker, speaker_name
from core.embeddings.spaces import embedding_provider_for_space, embedding_space_active_for_reads
from core.exceptions import ApplicationError
from core.runtime.db_routers import search_connection, search_reads
from core.runtime.timing import stage_timed
from core.search.listing import entries_interleaved
from core.search.rerank import Reranker, hits_reranked, rerank_depth
from core.search.retrieval import (
    NEIGHBOUR_SEEDS,
    NEIGHBOUR_WEIGHT,
    SEARCH_TOP_K_MAX,
    SPEAKER_WEIGHT,
    TIME_WEIGHT,
    CorpusKey,
    TimeQuery,
    bm25_ranking,
    query_embedding_start,
    reciprocal_rank_fusion,
    search_options_errors,
    time_query_read,
    time_ranking,
)
from core.search.time_expressions import Period

TOP_K_MAX = SEARCH_TOP_K_MAX
SEARCH_MODES = ("hybrid", "semantic", "text")
CORPUS_MESSAGES = "messages"
# Each signal ranks this many candidates per requested result (at least MIN_CANDIDATES) before fusion.
CANDIDATES_PER_RESULT = 4
MIN_CANDIDATES = 40


class MessagesGraphRanking(Protocol):
    """The graph signal of turn search, which the app that keeps the entity graph gives (conversations sits below
    facts and does not import it): facts.selectors.graph_search.messages_graph_ranking."""

    def __call__(
        self, *, agent_id: int, user_id: int, query: str, hops: int, limit: int, period: Period | None
    ) -> list[int]:
        """Up to `limit` message ids about the entities the query names and those `hops` relations from them, best
        first; the caller keeps those in its scope."""


class MessagesListRanking(Protocol):
    """The list part of turn search, which the app that files memory by category gives:
    facts.selectors.list_questions.messages_list_ranking."""

    def __call__(self, *, agent_id: int, user_id: int, query: str) -> list[tuple[str, list[int]]]:
        """For a question asking for a list within a category, its entries: each as its category and the ids of the
        turns it was formed from; nothing otherwise. The caller keeps the messages in its scope."""


@dataclass(frozen=True)
class MessageHit:
    message: Message
    similarity: float | None
    session_external_id: str
    score: float = 0.0
    vector_rank: int | None = None
    text_rank: int | None = None
    time_rank: int | None = None
    neighbour_rank: int | None = None
    speaker_rank: int | None = None
    graph_rank: int | None = None
    rerank_rank: int | None = None  # its place in the reranker's order (core.search.rerank), when it reordered them
    rerank_score: float | None = None
    listed: str = (
        ""  # "list:<category>": ranked by the list signal, a turn of an entry of the list the question asks for
    )

    @property
    def reasons(self) -> list[str]:
        """Why it was returned: the list it answers, then each signal that ranked it."""
        signals = [
            ("vector", self.vector_rank),
            ("text", self.text_rank),
            ("graph", self.graph_rank),
            ("time", self.time_rank),
            ("neighbour", self.neighbour_rank),
            ("speaker", self.speaker_rank),
            ("rerank", self.rerank_rank),
        ]
        return ([self.listed] if self.listed else []) + [name for name, rank in signals if rank is not None]


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


@dataclass(frozen=True)
class _Scope:
    """What one message search may read: the user's rows in the space (one session's, one period's when given), less
    the excluded messages."""

    space_id: int
    agent_id: int
    user_id: int
    session_id: int | None
    exclude_message_ids: tuple[int, ...]
    time_query: TimeQuery

    def embeddings(self) -> QuerySet[MessageEmbedding]:
        """The scope's rows through the ORM, read through the (space, user) btree index (the vector signal)."""
        rows = MessageEmbedding.objects.filter(space_id=self.space_id, agent_id=self.agent_id, user_id=self.user_id)
        if self.session_id is not None:
            rows = rows.filter(session_id=self.session_id)
        if self.exclude_message_ids:
            rows = rows.exclude(message_id__in=list(self.exclude_message_ids))
        period = self.time_query.period
        if self.time_query.restrict and period is not None:
            start, end = self.time_query.period_bounds()
            rows = rows.filter(
                Q(message__created_at__gte=start, message__created_at__lt=end)
                | Q(refers_to__gte=period.start, refers_to__lte=period.end)
            )
        return rows

    def conditions_sql(self) -> tuple[str, list]:
        """The same scope as conditions on `embedding` (the message embedding table), for the statements written by
        hand. The ids are cast to bigint so that the GIN index's btree_gin int8 class applies."""
        conditions = [
            "embedding.user_id = %s::bigint",
            "embedding.space_id = %s::bigint",
            "embedding.agent_id = %s::bigint",
        ]
        params: list = [self.user_id, self.space_id, self.agent_id]
        if self.session_id is not None:
            conditions.append("embedding.session_id = %s::bigint")
            params.append(self.session_id)
        if self.exclude_message_ids:
            conditions.append("NOT (embedding.message_id = ANY(%s::bigint[]))")
            params.append(list(self.exclude_message_ids))
        period = self.time_query.period
        if self.time_query.restrict and period is not None:
            start, end = self.time_query.period_bounds()
            conditions.append(
                f"(embedding.refers_to BETWEEN %s AND %s OR EXISTS (SELECT 1 FROM {Message._meta.db_table} AS said "
                "WHERE said.id = embedding.message_id AND said.created_at >= %s AND said.created_at < %s))"
            )
            params += [period.start, period.end, start, end]
        return " AND ".join(conditions), params


def _text_ranking(*, scope: _Scope, query: str, limit: int) -> list[tuple[int, float, float]]:
    """(message id, BM25 score, strength) of the scope's messages matching any query word."""
    conditions, params = scope.conditions_sql()
    matched_sql = (
        "SELECT embedding.message_id AS id, embedding.search_vector AS tsv "
        f"FROM {MessageEmbedding._meta.db_table} AS embedding, query "
        f"WHERE {conditions} AND embedding.search_vector @@ query.tsquery"
    )
    return bm25_ranking(
        corpora=[CorpusKey(corpus=CORPUS_MESSAGES, space_id=scope.space_id, scope_id=scope.user_id)],
        matched_sql=matched_sql,
        matched_params=params,
        query=query,
        limit=limit,
        count_repeats=True,  # a turn is indexed with the turn before it: repeats carry weight (bm25_ranking)
    )


def _graph_ranking(*, ranking: MessagesGraphRanking | None, scope: _Scope, query: str, limit: int) -> list[int]:
    """The turns the relations about the entities the query names (and their neighbours in the graph) were formed
    from, that are in the scope, in the graph's order."""
    if ranking is None:
        return []
    ordered = ranking(
        agent_id=scope.agent_id,
        user_id=scope.user_id,
        query=query,
        hops=settings.MEMORY_GRAPH_HOPS,
        limit=limit,
        period=scope.time_query.period,
    )
    in_scope = _in_scope(scope=scope, message_ids=ordered)
    return [pk for pk in ordered if pk in in_scope]


def _in_scope(*, scope: _Scope, message_ids: list[int]) -> set[int]:
    if not message_ids:
        return set()
    conditions, params = scope.conditions_sql()
    with search_connection().cursor() as cursor:
        cursor.execute(
            f"SELECT embedding.message_id FROM {MessageEmbedding._meta.db_table} AS embedding "
            f"WHERE {conditions} AND embedding.message_id = ANY(%s::bigint[])",
            [*params, message_ids],
        )
        return {row[0] for row in cursor.fetchall()}


def _list_ranking(
    *, ranking: MessagesListRanking, scope: _Scope, query: str, scores: dict[int, float], limit: int
) -> dict[int, str]:
    """A list question: the turns of its entries (in the scope), best first, each with why ("list:<category>"), every
    entry's best-scored turn before any entry's second."""
    entries = ranking(agent_id=scope.agent_id, user_id=scope.user_id, query=query)
    if not entries:
        return {}
    in_scope = _in_scope(scope=scope, message_ids=[pk for _, ids in entries for pk in ids])
    kept = [(category, [pk for pk in ids if pk in in_scope]) for category, ids in entries]
    category_of = {pk: category for category, ids in reversed(kept) for pk in ids}
    chosen = entries_interleaved(entries=[ids for _, ids in kept], scores=scores, limit=limit)
    return {pk: f"list:{category_of[pk]}" for pk in chosen}


def _neighbour_ranking(*, scope: _Scope, seeds: list[int]) -> list[int]:
    """The messages just before and after each seed in its session, in the seeds' order, that are in the scope and
    not seeds themselves, in one statement (each neighbour through the (session, id) index)."""
    conditions, params = scope.conditions_sql()
    messages = Message._meta.db_table
    sql = f"""
        SELECT near.id
        FROM unnest(%s::bigint[]) WITH ORDINALITY AS seed(id, place)
        JOIN {messages} AS seed_message ON seed_message.id = seed.id
        CROSS JOIN LATERAL (
            (SELECT before.id, 0 AS side FROM {messages} AS before
             WHERE before.session_id = seed_message.session_id AND before.id < seed.id
             ORDER BY before.id DESC LIMIT 1)
            UNION ALL
            (SELECT after.id, 1 AS side FROM {messages} AS after
             WHERE after.session_id = seed_message.session_id AND after.id > seed.id
             ORDER BY after.id LIMIT 1)
        ) AS near
        JOIN {MessageEmbedding._meta.db_table} AS embedding ON embedding.message_id = near.id
        WHERE {conditions}
        ORDER BY seed.place, near.side
    """
    with search_connection().cursor() as cursor:
        cursor.execute(sql, [seeds, *params])
        found = [row[0] for row in cursor.fetchall()]
    return [pk for pk in dict.fromkeys(found) if pk not in set(seeds)]


@dataclass(frozen=True)
class _CandidateDetails:
    said_at: datetime
    refers_to: date | None
    speaker: str


def _candidate_details(*, space_id: int, message_ids: Collection[int]) -> dict[int, _CandidateDetails]:
    """When each candidate was said, the day its text names, and who said it: for the time and speaker signals."""
    with search_connection().cursor() as cursor:
        cursor.execute(
            f"""
            SELECT embedding.message_id, message.created_at, embedding.refers_to, message.role,
                   message.metadata ->> 'speaker', message.metadata ->> 'name'
            FROM {MessageEmbedding._meta.db_table} AS embedding
            JOIN {Message._meta.db_table} AS message ON message.id = embedding.message_id
            WHERE embedding.space_id = %s::bigint AND embedding.message_id = ANY(%s::bigint[])
            """,
            [space_id, list(message_ids)],
        )
        rows = cursor.fetchall()
    return {
        message_id: _CandidateDetails(
            said_at=said_at,
            refers_to=refers_to,
            speaker=speaker_name(role=role, metadata={"speaker": speaker, "name": name}),
        )
        for message_id, said_at, refers_to, role, speaker, name in rows
    }


def _speaker_ranking(*, order: list[int], details: dict[int, _CandidateDetails], query: str) -> list[int]:
    """The candidates, in `order`, said by the speaker the query names; nothing when it names none of them, or more
    than one (then every candidate would match)."""
    speakers = {detail.speaker for detail in details.values()}
    named = {speaker for speaker in speakers if re.search(rf"\b{re.escape(speaker)}\b", query, re.IGNORECASE)}
    if len(named) != 1:
        return []
    return [pk for pk in order if pk in details and details[pk].speaker in named]


def _search_options_validate(
    *, query: str, top_k: int, mode: str, time_from: date | None, time_to: date | None, time_filter: str
) -> None:
    errors = search_options_errors(
        query=query,
        top_k=top_k,
        mode=mode,
        modes=SEARCH_MODES,
        time_from=time_from,
        time_to=time_to,
        time_filter=time_filter,
    )
    if errors:
        raise ApplicationError(f"Invalid search: {', '.join(errors)}.", fields=errors)


@dataclass
class _Fusion:
    """Each signal's ranking (message id -> rank) and weight, fused by weighted reciprocal rank fusion; full-text
    ranks count with the strength of their match."""

    ranks: dict[str, dict[int, int]]
    weights: dict[str, float]
    text_strength: dict[int, float]

    def add(self, signal: str, ordered: list[int], weight: float) -> None:
        self.ranks[signal] = {pk: rank for rank, pk in enumerate(ordered, start=1)}
        self.weights[signal] = weight

    def scores(self, signals: list[str]) -> dict[int, float]:
        used = [signal for signal in signals if signal in self.ranks and self.weights[signal]]
        return {
            pk: reciprocal_rank_fusion(
                ranks=[self.ranks[signal].get(pk) for signal in used],
                weights=[self.weights[signal] for signal in used],
                strengths=[self.text_strength.get(pk, 1.0) if signal == "text" else 1.0 for signal in used],
                k=settings.MEMORY_RRF_K,
            )
            for pk in {pk for signal in used for pk in self.ranks[signal]}
        }

    @staticmethod
    def best_first(scores: dict[int, float]) -> list[int]:
        return sorted(scores, key=lambda pk: (-scores[pk], -pk))


def _first_signals_rank(
    *,
    scope: _Scope,
    query: str,
    embedding: Future[np.ndarray] | None,
    mode: str,
    limit: int,
    min_similarity: float | None,
) -> tuple[_Fusion, dict[int, float]]:
    """Full text and the vector: the fusion of the two, and each vector candidate's similarity."""
    text_rows: list[tuple[int, float, float]] = []
    if mode != "semantic":
        with stage_timed("text_sql"):
            text_rows = _text_ranking(scope=scope, query=query, limit=limit)
    vector_rows: list[tuple[int, float]] = []
    if embedding is not None:
        with stage_timed("embed_wait"):
            vector = embedding.result()
        with stage_timed("vector_sql"):
            vector_rows = _vector_ranking(scope.embeddings(), vector=vector, limit=limit, min_similarity=min_similarity)
    fusion = _Fusion(
        ranks={
            "vector": {pk: rank for rank, (pk, _) in enumerate(vector_rows, start=1)},
            "text": {pk: rank for rank, (pk, _, _) in enumerate(text_rows, start=1)},
        },
        weights={
            "vector": 1.0 if mode != "text" else 0.0,
            "text": settings.MEMORY_TEXT_WEIGHT if mode != "semantic" else 0.0,
        },
        text_strength={pk: share for pk, _, share in text_rows},
    )
    return fusion, dict(vector_rows)


def _around_the_hits_rank(
    *,
    fusion: _Fusion,
    scope: _Scope,
    query: str,
    space_id: int,
    limit: int,
    graph_ranking: MessagesGraphRanking | None,
) -> None:
    """Hybrid mode: the graph signal (the turns about the entities the query names), the time signal (when the query
    asks when or names a period), then the neighbours of the best hits and the turns of the speaker the query names,
    each ranked from the fused order so far."""
    if settings.MEMORY_GRAPH_WEIGHT > 0:
        with stage_timed("graph_sql"):
            graph = _graph_ranking(ranking=graph_ranking, scope=scope, query=query, limit=limit)
            fusion.add("graph", graph, settings.MEMORY_GRAPH_WEIGHT)
    order = fusion.best_first(fusion.scores(["vector", "text", "graph"]))
    if not order:
        return
    with stage_timed("details_sql"):
        details = _candidate_details(space_id=space_id, message_ids=order)
    if scope.time_query.active:
        dates = {pk: (detail.said_at, detail.refers_to) for pk, detail in details.items()}
        fusion.add("time", time_ranking(order=order, dates=dates, time_query=scope.time_query), TIME_WEIGHT)
        order = fusion.best_first(fusion.scores(["vector", "text", "graph", "time"]))
    with stage_timed("neighbour_sql"):
        fusion.add("neighbour", _neighbour_ranking(scope=scope, seeds=order[:NEIGHBOUR_SEEDS]), NEIGHBOUR_WEIGHT)
    fusion.add("speaker", _speaker_ranking(order=order, details=details, query=query), SPEAKER_WEIGHT)


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
    time_from: date | None = None,
    time_to: date | None = None,
    time_filter: str = "boost",
    graph_ranking: MessagesGraphRanking | None = None,
    list_ranking: MessagesListRanking | None = None,
) -> list[MessageHit]:
    """The user's past messages (one session's when `session` is given) that best answer `query`: vector similarity
    (`semantic`), BM25 full-text (`text`), or both (`hybrid`), fused with weighted reciprocal rank fusion (k =
    MEMORY_RRF_K, full-text weight MEMORY_TEXT_WEIGHT) with the graph signal (`graph_ranking`, which facts gives:
    facts.selectors.graph_search.messages_graph_ranking; without it, none), the time signal (when the query asks when,
    or names a period, or `time_from`/`time_to` give one) and the neighbours of the best hits. `time_filter`
    "restrict" searches only messages said, or naming a day, within the given period; "boost" ranks them higher.
    Without a user, nothing: messages are never shared across users. `min_similarity` drops vector candidates below
    it; full-text matches stay. In hybrid mode, a question asking for a list within a category adds the list signal:
    the turns of that list's entries (`list_ranking`, which facts gives: facts.selectors.list_questions.
    messages_list_ranking), weight MEMORY_LIST_WEIGHT; each hit says why it was returned (`reasons`)."""
    _search_options_validate(
        query=query, top_k=top_k, mode=mode, time_from=time_from, time_to=time_to, time_filter=time_filter
    )
    if user is None:
        return []
    space = embedding_space_active_for_reads()
    embedding = (
        query_embedding_start(provider=embedding_provider_for_space(space=space), text=query)
        if mode != "text"
        else None
    )
    with stage_timed("time_query"):
        time_query = time_query_read(
            query=query, time_from=time_from, time_to=time_to, time_filter=time_filter, fused=mode == "hybrid"
        )
    scope = _Scope(
        space_id=space.pk,
        agent_id=agent.pk,
        user_id=user.pk,
        session_id=session.pk if session is not None else None,
        exclude_message_ids=tuple(exclude_message_ids),
        time_query=time_query,
    )
    limit = max(top_k * CANDIDATES_PER_RESULT, MIN_CANDIDATES)
    fusion, similarity = _first_signals_rank(
        scope=scope, query=query, embedding=embedding, mode=mode, limit=limit, min_similarity=min_similarity
    )
    if mode == "hybrid":  # a single-signal mode keeps to its signal (min_similarity bounds semantic hits)
        _around_the_hits_rank(
            fusion=fusion, scope=scope, query=query, space_id=space.pk, limit=limit, graph_ranking=graph_ranking
        )
    signals = ["vector", "text", "graph", "time", "neighbour", "speaker"]
    listed: dict[int, str] = {}
    if mode == "hybrid" and list_ranking is not None and settings.MEMORY_LIST_WEIGHT > 0:
        with stage_timed("list_sql"):
            listed = _list_ranking(
                ranking=list_ranking, scope=scope, query=query, scores=fusion.scores(signals), limit=limit
            )
        fusion.add("list", list(listed), settings.MEMORY_LIST_WEIGHT)
    scores = fusion.scores([*signals, "list"])
    reranker = agent_reranker(agent=agent) if mode == "hybrid" else Reranker.OFF
    best = fusion.best_first(scores)[: rerank_depth(reranker=reranker, top_k=top_k)]
    with stage_timed("hits_sql"):
        messages = Message.objects.select_related("session").in_bulk(best)
    with stage_timed("screen"):
        messages_screen_for_reading(agent=agent, messages=messages.values())
    hits = [
        MessageHit(
            message=messages[pk],
            similarity=similarity.get(pk),
            session_external_id=messages[pk].session.external_id,
            score=scores[pk],
            vector_rank=fusion.ranks["vector"].get(pk),
            text_rank=fusion.ranks["text"].get(pk),
            time_rank=fusion.ranks.get("time", {}).get(pk),
            neighbour_rank=fusion.ranks.get("neighbour", {}).get(pk),
            speaker_rank=fusion.ranks.get("speaker", {}).get(pk),
            graph_rank=fusion.ranks.get("graph", {}).get(pk),
            listed=listed.get(pk, ""),
        )
        for pk in best
    ]
    return hits_reranked(
        reranker=reranker,
        query=query,
        hits=hits,
        text=lambda hit: f"{message_speaker(message=hit.message)}: {hit.message.content}",
        agent_id=agent.pk,
    )[:top_k]


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
