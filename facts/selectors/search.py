"""Hybrid fact search (DESIGN.md §2.4): a vector signal and a full-text signal, both pre-filtered to the caller's
scope, fused with reciprocal rank fusion, optionally blended with recency and diversified with MMR.

Both signals read the caller's scope (facts.selectors.search_scope): the agent's facts visible agent-wide plus the
user's own. The full-text signal (facts.selectors.fulltext) runs while the query is embedded; the vector signal and
the full-text matches' details come in one statement (facts.selectors.vectors); the hits' rows in a last one. A fact
is searchable once it has a vector in the active embedding space (fact_create embeds synchronously)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from datetime import date, datetime
from typing import cast

import numpy as np
from django.conf import settings
from django.db import models
from django.db.models import Q, QuerySet
from django.utils import timezone

from agents.models import Agent, EndUser
from agents.selectors.reranking import agent_reranker
from core.embeddings.spaces import embedding_provider_for_space, embedding_space_active_for_reads
from core.exceptions import ApplicationError
from core.models import EmbeddingSpace
from core.runtime.db_routers import search_reads
from core.runtime.timing import stage_record, stage_timed
from core.search.rerank import Reranker, hits_reranked, rerank_depth
from core.search.retrieval import (
    SEARCH_TOP_K_MAX,
    TIME_WEIGHT,
    TimeQuery,
    query_embedding_start,
    reciprocal_rank_fusion,
    search_options_errors,
    time_query_read,
    time_ranking,
)
from core.search.time_expressions import Period
from facts.grammar.slots import QuestionTopic, question_topic
from facts.grammar.time_questions import asks_about_the_present, names_a_year, relative_anchor
from facts.models import Fact, FactEmbedding, FactScope
from facts.selectors.first_person import first_person_query
from facts.selectors.fulltext import facts_text_ranking
from facts.selectors.graph_search import GraphRow, facts_graph_ranking
from facts.selectors.list_questions import facts_list_ranking
from facts.selectors.search_scope import FactSearchScope
from facts.selectors.search_world_time import CandidateWorldTimes, TimeAsked, world_time_tiers
from facts.selectors.slots import facts_answering_topic
from facts.selectors.user_names import user_names_as_first_person
from facts.selectors.vectors import facts_vector_ranking
from facts.services.access import facts_access_record_later
from facts.world_time import TimePrecision, WorldTime

TOP_K_MAX = SEARCH_TOP_K_MAX
SMALL_STORE_MAX_FACTS = 5
RECENCY_DECAY_DAYS = 30.0
# Each signal ranks this many candidates per requested result (at least MIN_CANDIDATES) before fusion and MMR.
CANDIDATES_PER_RESULT = 4
MIN_CANDIDATES = 40


class SearchMode(models.TextChoices):
    HYBRID = "hybrid", "vector and full-text, fused"
    SEMANTIC = "semantic", "vector only"
    TEXT = "text", "full-text only"


@dataclass(frozen=True)
class FactHit:
    """One search result. `score` is the fused relevance (reciprocal rank fusion, scaled so that first place in
    every signal used scores 1.0), blended with recency when asked; a fallback-to-recent hit scores 0. `similarity`
    is the cosine similarity to the query whenever the query was embedded; the ranks are 1-based places in each
    signal's list (time: core.search.retrieval.time_ranking), None when the fact was not in it. `rerank_rank` is the
    fact's place in the reranker's order when the agent's reranker reordered the search (core.search.rerank), with the
    rerank server's `rerank_score`."""

    fact: Fact
    score: float
    similarity: float | None
    vector_rank: int | None
    text_rank: int | None
    text_score: float | None
    time_rank: int | None = None
    graph_rank: int | None = None
    rerank_rank: int | None = None
    rerank_score: float | None = None
    listed: str = ""  # "list:<category>": ranked by the list signal, an entry of the list the question asks for
    topic: str = ""  # "topic:<category>": it answers the topic the question asks for (facts.grammar.slots)

    @property
    def reasons(self) -> list[str]:
        """Why it was returned: the list it answers, then each signal that ranked it; "recent" when none did (a small
        store's or the fallback's facts)."""
        signals = [
            ("vector", self.vector_rank),
            ("text", self.text_rank),
            ("graph", self.graph_rank),
            ("time", self.time_rank),
            ("rerank", self.rerank_rank),
        ]
        reasons = [label for label in (self.listed, self.topic) if label]
        reasons += [name for name, rank in signals if rank is not None]
        return reasons or ["recent"]


@dataclass(frozen=True)
class _Signals:
    vector_rows: list[tuple[int, float, datetime]]  # (fact id, similarity, valid_from), most similar first
    text_rows: list[tuple[int, float, float]]  # (fact id, BM25 score, strength), best first
    text_details: dict[int, tuple[float | None, datetime]]  # full-text matches' (similarity, valid_from)
    small_store: bool  # the scope holds at most SMALL_STORE_MAX_FACTS facts
    graph_rows: list[GraphRow]  # facts about the entities the query names and related ones, best first


@dataclass
class _Candidate:
    fact_id: int
    valid_from: datetime
    similarity: float | None = None
    vector_rank: int | None = None
    text_rank: int | None = None
    text_score: float | None = None
    time_rank: int | None = None
    graph_rank: int | None = None
    score: float = 0.0
    tier: int = 0  # by world time: a lower tier ranks first whatever the score (world_time_tiers)
    listed: str = ""
    topic: str = ""
    off_topic: bool = False  # the question asks for a topic this fact does not answer: after those that do


def _options_validate(
    *,
    agent: Agent,
    user: EndUser | None,
    query: str,
    top_k: int,
    mode: str,
    min_similarity: float | None,
    recency_weight: float,
    mmr_lambda: float | None,
    scopes: list[str] | None,
    time_from: date | None,
    time_to: date | None,
    time_filter: str,
) -> None:
    errors = search_options_errors(
        query=query,
        top_k=top_k,
        mode=mode,
        modes=SearchMode.values,
        time_from=time_from,
        time_to=time_to,
        time_filter=time_filter,
    )
    if min_similarity is not None and not -1.0 <= min_similarity <= 1.0:
        errors["min_similarity"] = ["must be between -1 and 1"]
    if min_similarity is not None and mode == SearchMode.TEXT:
        errors["min_similarity"] = ["needs the semantic signal: use mode 'hybrid' or 'semantic'"]
    if not 0.0 <= recency_weight <= 1.0:
        errors["recency_weight"] = ["must be between 0 and 1"]
    if mmr_lambda is not None and not 0.0 <= mmr_lambda <= 1.0:
        errors["mmr_lambda"] = ["must be between 0 and 1"]
    if scopes is not None and not set(scopes) <= set(FactScope.values):
        errors["scopes"] = [f"must be a list of {', '.join(FactScope.values)}"]
    if user is not None and user.agent_id != agent.pk:
        errors["user"] = ["belongs to another agent"]
    if errors:
        raise ApplicationError(f"Invalid search: {', '.join(errors)}.", fields=errors)


def _scope_embeddings(scope: FactSearchScope) -> QuerySet[FactEmbedding]:
    """The scope's vector rows, for the rarely taken paths that list rather than rank them (a small store, the
    fallback to recent facts, a text-only search's size check): the agent's facts visible agent-wide, plus the
    user's own."""
    visible = Q(restricted_to_user__isnull=True)
    if scope.user_id is not None:
        visible |= Q(restricted_to_user_id=scope.user_id)
    queryset = FactEmbedding.objects.filter(space_id=scope.space_id, agent_id=scope.agent_id).filter(visible)
    if scope.as_of is not None:
        queryset = queryset.filter(Q(valid_to__isnull=True) | Q(valid_to__gt=scope.as_of), valid_from__lte=scope.as_of)
        queryset = queryset.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=scope.as_of))
    elif not scope.include_history:
        queryset = queryset.filter(valid_to__isnull=True)
        queryset = queryset.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))
    if scope.scopes:
        queryset = queryset.filter(fact__scopes__overlap=list(scope.scopes))
    if scope.tags:
        queryset = queryset.filter(fact__tags__overlap=list(scope.tags))
    if scope.period:
        period = (scope.period.start, scope.period.end)
        queryset = queryset.filter(Q(fact__refers_to__range=period) | Q(valid_from__date__range=period))
    if scope.holds_at:
        queryset = queryset.filter(
            Q(fact__held_from__isnull=True) | Q(fact__held_from__lte=scope.holds_at),
            Q(fact__held_until__isnull=True) | Q(fact__held_until__gt=scope.holds_at),
        )
    return queryset


def _fuse(
    *, signals: _Signals, use_vector: bool, use_text: bool, time_query: TimeQuery, world: CandidateWorldTimes
) -> dict[int, _Candidate]:
    """Weighted reciprocal rank fusion (core.search.retrieval): score = Σ weight / (k + rank) over the signals used, the
    vector's weight 1 and full text's MEMORY_TEXT_WEIGHT times the strength of the fact's match, scaled so that
    first place in every signal scores 1.0 and scores stay comparable across modes. In hybrid mode the graph signal
    (MEMORY_GRAPH_WEIGHT) adds the facts about the entities the query names and their neighbours, and, when the query
    asks when or is about a period, the time signal (TIME_WEIGHT) ranks the candidates that hold that time, in their
    fused order."""
    candidates: dict[int, _Candidate] = {}
    text_details = signals.text_details
    for rank, (fact_id, similarity, valid_from) in enumerate(signals.vector_rows, start=1):
        candidates[fact_id] = _Candidate(
            fact_id=fact_id, valid_from=valid_from, similarity=similarity, vector_rank=rank
        )
    strength = {}
    for rank, (fact_id, text_score, share) in enumerate(signals.text_rows, start=1):
        if fact_id not in text_details:
            continue  # erased or re-embedded between the two statements: it is no longer searchable
        text_similarity, text_valid_from = text_details[fact_id]
        candidate = candidates.setdefault(fact_id, _Candidate(fact_id=fact_id, valid_from=text_valid_from))
        candidate.text_rank, candidate.text_score, strength[fact_id] = rank, text_score, share
        if candidate.similarity is None:
            candidate.similarity = text_similarity
    use_graph = bool(signals.graph_rows)
    for rank, row in enumerate(signals.graph_rows, start=1):
        candidate = candidates.setdefault(row.fact_id, _Candidate(fact_id=row.fact_id, valid_from=row.valid_from))
        candidate.graph_rank = rank

    def score(candidate: _Candidate, *, with_time: bool) -> float:
        ranks = (
            [candidate.vector_rank] * use_vector
            + [candidate.text_rank] * use_text
            + [candidate.graph_rank] * use_graph
            + [candidate.time_rank] * with_time
        )
        return reciprocal_rank_fusion(
            ranks=ranks,
            weights=[1.0] * use_vector
            + [settings.MEMORY_TEXT_WEIGHT] * use_text
            + [settings.MEMORY_GRAPH_WEIGHT] * use_graph
            + [TIME_WEIGHT] * with_time,
            strengths=[1.0] * use_vector
            + [strength.get(candidate.fact_id, 1.0)] * use_text
            + [1.0] * use_graph
            + [1.0] * with_time,
            k=settings.MEMORY_RRF_K,
        )

    for candidate in candidates.values():
        candidate.score = score(candidate, with_time=False)
    if time_query.active and use_vector and use_text and candidates:  # a single-signal mode keeps to its signal
        world.read(fact_ids=list(candidates))
        order = sorted(candidates.values(), key=lambda c: (-c.score, -c.valid_from.timestamp(), -c.fact_id))
        timed = time_ranking(
            order=[c.fact_id for c in order],
            dates={c.fact_id: (c.valid_from, world.refers_to.get(c.fact_id)) for c in order},
            time_query=time_query,
        )
        # A statement held in the world during the period, or one whose start a "when" question asks for, holds the
        # time too (the turns' dates alone cannot say that a job held through 2022).
        dated = set(timed) | {c.fact_id for c in order if _world_holds_the_time(world.times.get(c.fact_id), time_query)}
        timed = [c.fact_id for c in order if c.fact_id in dated]
        for rank, fact_id in enumerate(timed, start=1):
            candidates[fact_id].time_rank = rank
        for candidate in candidates.values():
            candidate.score = score(candidate, with_time=True)
    return candidates


def _world_holds_the_time(world: WorldTime | None, time_query: TimeQuery) -> bool:
    if world is None or not world.known:
        return False
    if time_query.period is None:
        return world.start is not None  # a "when" question: the statement says when it began
    period = time_query.period
    begun = world.start is None or world.start <= period.end
    not_over = world.end is None or world.end > period.start
    return begun and not_over and world.end_precision != TimePrecision.UNKNOWN


def _topic_first(*, candidates: dict[int, _Candidate], topic: QuestionTopic, now_asked: bool) -> None:
    """A question about the user that asks for one topic of theirs ("Where does the user work now?", "What pets does
    the user have?"): the facts that answer it (a slot stated, or filed under its categories) come first within their
    world-time tier, before those that only share its words, its tense or its time ("The user lives in Leslieville",
    "The user swims every morning before work"); each says so in its reasons."""
    answering = facts_answering_topic(fact_ids=list(candidates), topic=topic, now_asked=now_asked)
    for fact_id, candidate in candidates.items():
        if fact_id in answering:
            candidate.topic = f"topic:{topic.name}"
        else:
            candidate.off_topic = True


def _recency_blend(*, candidates: list[_Candidate], weight: float, now: datetime) -> None:
    for candidate in candidates:
        age_days = max((now - candidate.valid_from).total_seconds(), 0.0) / 86400
        candidate.score = (1.0 - weight) * candidate.score + weight * math.exp(-age_days / RECENCY_DECAY_DAYS)


def _own_facts_boost(*, candidates: list[_Candidate], user: EndUser, boost: float) -> None:
    """A first-person question is about the user: their own facts outrank agent-wide ones of similar score."""
    own = set(Fact.objects.filter(pk__in=[c.fact_id for c in candidates], user=user).values_list("pk", flat=True))
    for candidate in candidates:
        if candidate.fact_id in own:
            candidate.score *= 1 + boost


def _mmr_select(
    *, candidates: list[_Candidate], space: EmbeddingSpace, mmr_lambda: float, top_k: int
) -> list[_Candidate]:
    """Maximal marginal relevance: repeatedly take the candidate with the best λ·score − (1−λ)·(its highest cosine
    similarity to those already taken), so near-duplicates give way to other relevant facts."""
    vectors = {
        fact_id: np.asarray(embedding, dtype=np.float32)
        for fact_id, embedding in FactEmbedding.objects.filter(
            space=space, fact_id__in=[candidate.fact_id for candidate in candidates]
        ).values_list("fact_id", "embedding")
    }
    for fact_id, vector in vectors.items():
        vectors[fact_id] = vector / (np.linalg.norm(vector) or 1.0)
    selected: list[_Candidate] = []
    remaining = list(candidates)
    while remaining and len(selected) < top_k:
        best = max(
            remaining,
            key=lambda candidate: (
                mmr_lambda * candidate.score
                - (1.0 - mmr_lambda)
                * max((float(vectors[candidate.fact_id] @ vectors[taken.fact_id]) for taken in selected), default=0.0)
            ),
        )
        selected.append(best)
        remaining.remove(best)
    return selected


@search_reads()
def facts_search(
    *,
    agent: Agent,
    user: EndUser | None,
    query: str,
    top_k: int = 10,
    mode: str = SearchMode.HYBRID,
    min_similarity: float | None = None,
    recency_weight: float = 0.0,
    mmr_lambda: float | None = None,
    scopes: list[str] | None = None,
    tags: list[str] | None = None,
    as_of: datetime | None = None,
    include_history: bool = False,
    fallback_to_recent: bool = False,
    record_access: bool = True,
    time_from: date | None = None,
    time_to: date | None = None,
    time_filter: str = "boost",
    holds_at: date | None = None,
) -> list[FactHit]:
    """The facts the agent may show in a conversation with `user` (its agent-wide facts plus the user's own; only
    agent-wide ones without a user) that best answer `query`.

    - `min_similarity` drops vector candidates below it; full-text matches stay (a rare name matches by text).
    - `scopes` and `tags` keep facts with any of the given values.
    - `as_of` reads the versions valid at that time (what memory held then); otherwise `include_history` adds closed
      versions to the current.
    - World time: `holds_at` keeps the facts whose statement may have held in the world that day, those that held
      for certain first. A statement known not to hold at the time a question asks about (now, a period it names,
      before or after a statement it names) ranks below every one that may (facts.selectors.search_world_time);
      among those that may, a question asking when or about a period ranks what held then first (the time signal).
    - Graph: in hybrid mode (unless MEMORY_GRAPH_WEIGHT is 0), the facts about the entities the query names and those
      up to MEMORY_GRAPH_HOPS relations from them (facts.selectors.graph_search) are a further signal; for a query
      about a period, those whose relations held in it first.
    - Time: in hybrid mode, a query asking when, or naming a period ("in May 2023"), or `time_from`/`time_to`, adds
      the time signal (facts valid from, or naming a day, within the period rank higher); in every mode `time_filter`
      "restrict" keeps only those.
    - Small stores: when at most SMALL_STORE_MAX_FACTS facts are in scope, all of them are returned, scored, whatever
      their similarity. `fallback_to_recent`: when nothing matches, the most recent facts are returned instead.
    The one write of this selector: unless `record_access` is False, the returned facts are logged for their access
    counts (facts/services/access.py: a Redis list, folded into the facts by beat)."""
    _options_validate(
        agent=agent,
        user=user,
        query=query,
        top_k=top_k,
        mode=mode,
        min_similarity=min_similarity,
        recency_weight=recency_weight,
        mmr_lambda=mmr_lambda,
        scopes=scopes,
        time_from=time_from,
        time_to=time_to,
        time_filter=time_filter,
    )
    with stage_timed("time_query"):
        time_query = time_query_read(
            query=query, time_from=time_from, time_to=time_to, time_filter=time_filter, fused=mode == SearchMode.HYBRID
        )
    space = embedding_space_active_for_reads()
    scope = FactSearchScope(
        space_id=space.pk,
        dimensions=space.dimensions,
        agent_id=agent.pk,
        user_id=user.pk if user is not None else None,
        scopes=tuple(scopes or ()),
        tags=tuple(tags or ()),
        as_of=as_of,
        include_history=include_history,
        period=time_query.period if time_query.restrict else None,
        holds_at=holds_at,
    )
    about_the_user = user_names_as_first_person(query=query, user=user) if user is not None else None
    first_person = first_person_query(about_the_user or query) if user is not None else None
    vector_query = first_person.vector_query if first_person else (about_the_user or query)
    signals = _signals_rank(
        scope=scope,
        space=space,
        vector_query=vector_query,
        text_query=first_person.text_query if first_person else (about_the_user or query),
        mode=mode,
        limit=max(top_k * CANDIDATES_PER_RESULT, MIN_CANDIDATES),
        min_similarity=min_similarity,
        graph_query=vector_query if about_the_user else query,
        graph_period=time_query.period,
    )
    fusion_started = time.perf_counter()
    world = CandidateWorldTimes()
    candidates = _fuse(
        signals=signals,
        use_vector=mode != SearchMode.TEXT,
        use_text=mode != SearchMode.SEMANTIC,
        time_query=time_query,
        world=world,
    )
    if mode == SearchMode.HYBRID and as_of is None and not (scopes or tags) and settings.MEMORY_LIST_WEIGHT > 0:
        _list_signal_add(
            candidates=candidates,
            agent=agent,
            user=user,
            query=about_the_user or query,
            limit=max(top_k * CANDIDATES_PER_RESULT, MIN_CANDIDATES),
        )
    if signals.small_store or (fallback_to_recent and not candidates):
        _unranked_add(candidates=candidates, scope=scope, limit=top_k)
    # A period the caller gives, or one the question dates with its year ("in 2019", "in May 2023"), is one time; a
    # period read from "in June" or "last year" is resolved against today, which a user may not mean.
    dated = time_from is not None or time_to is not None or names_a_year(query)
    asked = TimeAsked(
        holds_at=holds_at,
        present=not time_query.active and asks_about_the_present(query),
        period=time_query.period if time_query.period and not time_query.restrict and dated else None,
        anchor=relative_anchor(query) if time_query.period is None else None,
    )
    tiers = world_time_tiers(
        scores={fact_id: candidate.score for fact_id, candidate in candidates.items()},
        world=world,
        asked=asked,
        today=(as_of or timezone.now()).date(),
    )
    for fact_id, tier in tiers.items():
        candidates[fact_id].tier = tier
    topic = question_topic(vector_query) if user is not None and settings.MEMORY_TOPIC_FIRST else None
    if topic is not None:
        _topic_first(candidates=candidates, topic=topic, now_asked=asked.present)
    reranker = agent_reranker(agent=agent) if mode == SearchMode.HYBRID else Reranker.OFF
    ranked = _candidates_order(
        candidates=list(candidates.values()),
        own_facts_of=user if first_person is not None else None,
        recency_weight=recency_weight,
        now=as_of or timezone.now(),
        mmr_lambda=mmr_lambda,
        space=space,
        top_k=rerank_depth(reranker=reranker, top_k=top_k),
    )
    stage_record("fuse", time.perf_counter() - fusion_started)
    hits = hits_reranked(
        reranker=reranker,
        query=query,
        hits=_hits(ranked=ranked),
        text=lambda hit: hit.fact.content,
        band=lambda hit: tiers.get(hit.fact.pk, 0),  # what world time ruled out stays below
        agent_id=agent.pk,
    )[:top_k]
    if record_access:  # an operator looking is not the agent using the memory; retention reads access times
        facts_access_record_later(fact_ids=[hit.fact.pk for hit in hits])
    return hits


def _list_signal_add(
    *, candidates: dict[int, _Candidate], agent: Agent, user: EndUser | None, query: str, limit: int
) -> None:
    """A list question (facts.selectors.list_questions): its entries' facts are one more signal, of weight
    MEMORY_LIST_WEIGHT, added to the fused score on the same scale (first place in every hybrid signal scores 1)."""
    with stage_timed("list_sql"):
        listed = facts_list_ranking(
            agent_id=agent.pk,
            user_id=user.pk if user is not None else None,
            query=query,
            scores={fact_id: candidate.score for fact_id, candidate in candidates.items()},
            limit=limit,
        )
    total = 1.0 + settings.MEMORY_TEXT_WEIGHT + settings.MEMORY_GRAPH_WEIGHT
    k = settings.MEMORY_RRF_K
    for rank, item in enumerate(listed, start=1):
        candidate = candidates.setdefault(item.fact_id, _Candidate(fact_id=item.fact_id, valid_from=item.valid_from))
        candidate.listed = item.label
        candidate.score += settings.MEMORY_LIST_WEIGHT * (k + 1) / (k + rank) / total


def _unranked_add(*, candidates: dict[int, _Candidate], scope: FactSearchScope, limit: int) -> None:
    """Facts neither signal ranked: all of a small store, or the most recent ones as a fallback. Score 0."""
    rest = _scope_embeddings(scope).exclude(fact_id__in=list(candidates)).order_by("-valid_from", "-fact_id")
    for fact_id, valid_from in rest.values_list("fact_id", "valid_from")[:limit]:
        # The database copies valid_from from the fact when the vector is written: never null here.
        candidates[fact_id] = _Candidate(fact_id=fact_id, valid_from=cast(datetime, valid_from))


def _candidates_order(
    *,
    candidates: list[_Candidate],
    own_facts_of: EndUser | None,
    recency_weight: float,
    now: datetime,
    mmr_lambda: float | None,
    space: EmbeddingSpace,
    top_k: int,
) -> list[_Candidate]:
    """Best first, after the boosts the query asked for: the user's own facts for a first-person question, recency,
    and MMR diversity."""
    if own_facts_of is not None:
        _own_facts_boost(candidates=candidates, user=own_facts_of, boost=settings.FIRST_PERSON_USER_BOOST)
    if recency_weight:
        _recency_blend(candidates=candidates, weight=recency_weight, now=now)
    candidates.sort(
        key=lambda candidate: (
            candidate.tier,
            candidate.off_topic,
            -candidate.score,
            -candidate.valid_from.timestamp(),
            -candidate.fact_id,
        )
    )
    if mmr_lambda is not None and len(candidates) > 1:
        candidates = _mmr_select(candidates=candidates, space=space, mmr_lambda=mmr_lambda, top_k=top_k)
    return candidates[:top_k]


def _signals_rank(
    *,
    scope: FactSearchScope,
    space: EmbeddingSpace,
    vector_query: str,
    text_query: str,
    mode: str,
    limit: int,
    min_similarity: float | None,
    graph_query: str,
    graph_period: Period | None,
) -> _Signals:
    """The signals' rankings: full text while the query is embedded in a pool thread, then the vector ranking with
    the full-text matches' details in one statement, then in hybrid mode the graph's."""
    use_vector, use_text = mode != SearchMode.TEXT, mode != SearchMode.SEMANTIC
    embedding = (
        query_embedding_start(provider=embedding_provider_for_space(space=space), text=vector_query)
        if use_vector
        else None
    )
    text_rows = []
    if use_text:
        with stage_timed("text_sql"):
            text_rows = facts_text_ranking(scope=scope, query=text_query, limit=limit)
    with stage_timed("embed_wait"):
        vector = embedding.result() if embedding is not None else None
    with stage_timed("vector_sql"):
        vector_rows, text_details = facts_vector_ranking(
            scope=scope, vector=vector, limit=limit, text_ids=[fact_id for fact_id, _, _ in text_rows]
        )
    if vector is not None:
        # The vector signal ranks up to `limit` candidates: fewer means it ranked the whole scope.
        small_store = len(vector_rows) <= SMALL_STORE_MAX_FACTS
        if min_similarity is not None and not small_store:
            vector_rows = [row for row in vector_rows if row[1] >= min_similarity]
    else:
        small_store = _scope_embeddings(scope)[: SMALL_STORE_MAX_FACTS + 1].count() <= SMALL_STORE_MAX_FACTS
    graph_rows = []
    if use_vector and use_text and settings.MEMORY_GRAPH_WEIGHT > 0:  # a single-signal mode keeps to its signal
        with stage_timed("graph_sql"):
            graph_rows = facts_graph_ranking(
                scope=scope, query=graph_query, hops=settings.MEMORY_GRAPH_HOPS, limit=limit, period=graph_period
            )
    return _Signals(
        vector_rows=vector_rows,
        text_rows=text_rows,
        text_details=text_details,
        small_store=small_store,
        graph_rows=graph_rows,
    )


def _hits(*, ranked: list[_Candidate]) -> list[FactHit]:
    with stage_timed("hits_sql"):
        facts = Fact.objects.select_related("user", "source_session").in_bulk(
            [candidate.fact_id for candidate in ranked]
        )
    return [
        FactHit(
            fact=facts[candidate.fact_id],
            score=candidate.score,
            similarity=candidate.similarity,
            vector_rank=candidate.vector_rank,
            text_rank=candidate.text_rank,
            text_score=candidate.text_score,
            time_rank=candidate.time_rank,
            graph_rank=candidate.graph_rank,
            listed=candidate.listed,
            topic=candidate.topic,
        )
        for candidate in ranked
    ]


class FactSearchDisabled(ApplicationError):
    status_code = 403
    code = "rag_disabled"

    def __init__(self) -> None:
        super().__init__("Fact search (RAG) is switched off for this agent (rag_enabled).")
