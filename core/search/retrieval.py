"""Ranking pieces shared by fact search and message search: BM25 over PostgreSQL's lexemes, and weighted reciprocal
rank fusion.

Why BM25 rather than `websearch_to_tsquery` + `ts_rank_cd` (measured on the LoCoMo dev split,
docs/benchmarks/history.md): AND-ing every word of a question matches almost nothing (recall@10 2-25%), and an OR query
ranked by ts_rank lets a word that is everywhere (the user's name) outrank the rare word that matters, because ts_rank
has no inverse document frequency. BM25 over the same lexemes, OR-matched, with document frequencies taken from the
searched scope, was the strongest single signal on both corpora.

Every document holding any query lexeme matches the OR query, so the document frequencies computed over the matched
rows are exactly those of the whole scope. The scope's size and average length are kept by the database
(core.models.CorpusStatistics), so a query reads only its matched rows, found through a GIN index per scope."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

import numpy as np
from django.conf import settings
from django.db import connection

from core.embeddings.providers import EmbeddingProvider
from core.models import TEXT_SEARCH_CONFIG
from core.runtime.db_routers import search_connection
from core.runtime.timing import in_request_context, stage_timed
from core.search.time_expressions import TIME_WORD, Period, asks_for_time, named_period

BM25_K1 = 1.2
BM25_B = 0.75
# Full-text matches covering at least this share of the query's IDF count fully in fusion; weaker ones in proportion.
FULL_STRENGTH_COVERAGE = 0.2

# Weights of the signals fused after vector (1) and full text (MEMORY_TEXT_WEIGHT), chosen on the LoCoMo dev split
# (benchmarks/locomo_explore.py --time-hop-study, docs/benchmarks/history.md): the time signal at 1.0 (0.5 and 2.0
# gained less); the neighbour signal at 0.25 around the best NEIGHBOUR_SEEDS turns (0.5 and 1.0, or 10 seeds, gained on
# single-hop questions but lost 2 to 7 points on multi-hop ones).
TIME_WEIGHT = 1.0
NEIGHBOUR_WEIGHT = 0.25
NEIGHBOUR_SEEDS = 5
# Message search's speaker signal (the turns said by the one speaker a query names), studied the same way
# (--subject-study): 1.0 was best, heavier lost adversarial questions; for facts the same signal lost 3 to 4 points
# on adversarial questions at every weight and gained nothing, so fact search has none.
SPEAKER_WEIGHT = 1.0
TIME_FILTERS = ("boost", "restrict")

# Created lazily (threads start on the first submit), so forking servers start clean.
_query_embedding_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="query-embedding")
_query_vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_query_vectors_lock = threading.Lock()


def _query_vector_remember(*, key: tuple[str, str], vector: np.ndarray) -> np.ndarray:
    vector.setflags(write=False)  # shared by every later search for the same text
    with _query_vectors_lock:
        _query_vectors[key] = vector
        _query_vectors.move_to_end(key)
        while len(_query_vectors) > settings.EMBEDDING_QUERY_CACHE_SIZE:
            _query_vectors.popitem(last=False)
    return vector


def query_embedding_start(*, provider: EmbeddingProvider, text: str) -> Future[np.ndarray]:
    """Embeds a search query in a pool thread, so that the caller's thread can run the full-text ranking, which needs
    no vector, meanwhile: ONNX Runtime and the database driver both release the GIL, so the two overlap. The pool
    thread never touches the database. Recent queries' vectors are kept per process (EMBEDDING_QUERY_CACHE_SIZE,
    least recently used dropped first): an agent asking again, or a retry, skips the model."""
    key = (provider.space_name, text)
    with _query_vectors_lock:
        cached = _query_vectors.get(key)
        if cached is not None:
            _query_vectors.move_to_end(key)
    if cached is not None:
        done: Future[np.ndarray] = Future()
        done.set_result(cached)
        return done

    def embed() -> np.ndarray:
        with stage_timed("embed"):
            vector = provider.embed_query(text)
        return _query_vector_remember(key=key, vector=vector)

    return _query_embedding_pool.submit(in_request_context(embed))


def vector_literal(vector: np.ndarray) -> str:
    """pgvector's text form of a float32 vector, in the fewest digits that give back the same float32 values (nine
    significant ones): a search sends it in its statement, so length is parse time on the server."""
    return "[" + ",".join(f"{value:.9g}" for value in vector.astype(np.float32).tolist()) + "]"


@dataclass(frozen=True)
class CorpusKey:
    """One searchable scope whose statistics are kept (core.models.CorpusStatistics)."""

    corpus: str
    space_id: int
    scope_id: int


def corpus_statistics_sql(*, corpora: Sequence[CorpusKey]) -> tuple[str, list]:
    """A query of (documents, lexemes) summed over `corpora`: the folded statistics plus the changes not folded yet,
    read in one snapshot, so exact at every commit."""
    keys = " OR ".join(["(corpus = %s AND space_id = %s AND scope_id = %s)"] * len(corpora)) or "false"
    params = [value for key in corpora for value in (key.corpus, key.space_id, key.scope_id)]
    sql = f"""
        SELECT coalesce(sum(documents), 0)::float AS documents, coalesce(sum(lexemes), 0)::float AS lexemes FROM (
            SELECT documents, lexemes FROM core_corpusstatistics WHERE {keys}
            UNION ALL
            SELECT documents, lexemes FROM core_corpusstatisticschange WHERE {keys}
        ) AS kept
    """
    return sql, params + params


def corpus_documents_by_scope(*, corpus: str, space_id: int) -> dict[int, int]:
    """Documents of every scope of a corpus in a space, from the kept statistics (scopes with none are left out)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT scope_id, sum(documents) FROM (
                SELECT scope_id, documents FROM core_corpusstatistics WHERE corpus = %s AND space_id = %s
                UNION ALL
                SELECT scope_id, documents FROM core_corpusstatisticschange WHERE corpus = %s AND space_id = %s
            ) AS kept GROUP BY scope_id HAVING sum(documents) > 0
            """,
            [corpus, space_id, corpus, space_id],
        )
        return {scope_id: int(documents) for scope_id, documents in cursor.fetchall()}


# The `terms` CTE of bm25_ranking: (document, query lexeme it holds, term frequency). Counting a lexeme's positions
# unnests every matched document's tsvector; testing each query lexeme with @@ is about twice as fast, but counts a
# repeated word once.
_TERMS_COUNTED = """
    SELECT matched.id, length(matched.tsv) AS length, term.lexeme, cardinality(term.positions) AS tf
    FROM matched, query, unnest(matched.tsv) AS term(lexeme, positions, weights)
    WHERE term.lexeme = ANY(query.lexemes)
"""
_TERMS_ONCE = """
    SELECT matched.id, length(matched.tsv) AS length, term.lexeme, 1 AS tf
    FROM matched, query, unnest(query.lexemes, query.singles) AS term(lexeme, single)
    WHERE matched.tsv @@ term.single
"""


def bm25_ranking(
    *,
    corpora: Sequence[CorpusKey],
    matched_sql: str,
    matched_params: Sequence,
    query: str,
    limit: int,
    count_repeats: bool,
) -> list[tuple[int, float, float]]:
    """(id, BM25 score, strength) of the documents of `corpora` matching any lexeme of `query`, best first.

    `matched_sql` selects `id` and `tsv` of the scope's documents whose tsvector matches `(SELECT tsquery FROM
    query)`, the OR of the query's lexemes, through a GIN index. Nothing else of the scope is read: its size and
    average length come from the kept statistics, and every document holding a query lexeme is among the matched
    ones, so document frequencies counted over them are exactly the scope's.

    Strength is min(1, coverage / FULL_STRENGTH_COVERAGE)², coverage being the share of the query's inverse document
    frequency that the document matches (1.0: every query word, 0.05: only a word most documents have). Fusion scales
    the full-text signal by it, so a document that matched only the user's name cannot outrank the vector signal's
    best, while one that matched a fair part of the question keeps its full weight (LoCoMo dev split: scaling by
    coverage itself cost 1 to 2 points of recall@10, this threshold nothing measurable; docs/benchmarks/history.md).

    `count_repeats`: a word's term frequency is its number of occurrences; otherwise a document holds it or not,
    which halves the statement's time at 1M facts. Facts (atomic statements of at most ~30 words) rarely repeat a
    word: on the LoCoMo dev split observations keep their recall without counting (recall@10 61.8 against 61.7);
    turns, indexed with the previous turn and the speakers, lose 1.1 points (77.4 against 78.5), so they count.
    docs/benchmarks/history.md."""
    statistics_sql, statistics_params = corpus_statistics_sql(corpora=corpora)
    sql = f"""
        WITH query AS (
            SELECT array_agg(lexeme) AS lexemes, array_agg(quote_literal(lexeme)::tsquery) AS singles,
                   string_agg(quote_literal(lexeme), ' | ')::tsquery AS tsquery
            FROM unnest(tsvector_to_array(to_tsvector(%s::regconfig, %s))) AS lexeme
        ), matched AS (
            {matched_sql}
        ), terms AS (
            {_TERMS_COUNTED if count_repeats else _TERMS_ONCE}
        ), frequency AS (
            SELECT lexeme, count(*)::float AS df FROM terms GROUP BY lexeme
        ), stats AS (
            SELECT greatest(kept.documents, 1) AS n, greatest(kept.lexemes / greatest(kept.documents, 1), 1)
                   AS average_length
            FROM ({statistics_sql}) AS kept
        ), idf AS (
            -- greatest(): a document matched but not yet counted (written by a transaction this snapshot
            -- straddles) must not push the frequency past the corpus size.
            SELECT lexeme, ln(1 + (greatest(stats.n, coalesce(frequency.df, 0)) - coalesce(frequency.df, 0) + 0.5)
                              / (coalesce(frequency.df, 0) + 0.5)) AS idf
            FROM (SELECT unnest(lexemes) AS lexeme FROM query) AS asked LEFT JOIN frequency USING (lexeme), stats
        ), total AS (
            SELECT sum(idf) AS idf FROM idf
        )
        SELECT terms.id,
               sum(idf.idf * terms.tf * (%s + 1)
                   / (terms.tf + %s * (1 - %s + %s * terms.length / stats.average_length))) AS score,
               power(least(1.0, sum(idf.idf) / nullif(max(total.idf), 0) / %s), 2) AS strength
        FROM terms JOIN idf USING (lexeme), stats
        CROSS JOIN total
        GROUP BY terms.id
        ORDER BY score DESC, terms.id
        LIMIT %s
    """
    params = [
        TEXT_SEARCH_CONFIG,
        query,
        *matched_params,
        *statistics_params,
        BM25_K1,
        BM25_K1,
        BM25_B,
        BM25_B,
        FULL_STRENGTH_COVERAGE,
        limit,
    ]
    with search_connection().cursor() as cursor:
        cursor.execute(sql, params)
        return [(row[0], float(row[1]), float(row[2] or 0.0)) for row in cursor.fetchall()]


def reciprocal_rank_fusion(
    *, ranks: Sequence[int | None], weights: Sequence[float], k: float, strengths: Sequence[float] | None = None
) -> float:
    """Σ weight · strength / (k + rank) over the signals that ranked the item, scaled so that first place in every
    signal at full strength scores 1.0 (scores stay comparable across modes and settings). `strengths` (default 1)
    say how fully the item matched in each signal, such as full text's coverage."""
    strengths = strengths or [1.0] * len(ranks)
    total = sum(weights)
    return (
        sum(w * s * (k + 1) / (k + r) for r, w, s in zip(ranks, weights, strengths, strict=True) if r is not None)
        / total
    )


@dataclass(frozen=True)
class TimeQuery:
    """What a search knows about time: whether the query asks when something happened, the period it is about (the
    caller's `time_from`/`time_to`, else one the query names, such as "in May 2023"), and whether only that period
    may be searched (the caller's `time_filter` "restrict")."""

    asks_when: bool = False
    period: Period | None = None
    restrict: bool = False

    @property
    def active(self) -> bool:
        return self.asks_when or self.period is not None

    def period_bounds(self) -> tuple[datetime, datetime]:
        """The period as [start, end) in UTC datetimes, for timestamp columns (an open end: the last datetime)."""
        assert self.period is not None
        start = datetime.combine(self.period.start, time.min, tzinfo=UTC)
        if self.period.end == date.max:
            return start, datetime.max.replace(tzinfo=UTC)
        return start, datetime.combine(self.period.end, time.min, tzinfo=UTC) + timedelta(days=1)


def time_query_read(
    *,
    query: str,
    time_from: date | None,
    time_to: date | None,
    time_filter: str,
    fused: bool,
    now: datetime | None = None,
) -> TimeQuery:
    """The time side of a search. An explicit range wins over one named in the query; an open end is unbounded.
    Without `fused` (a single-signal mode, where no time signal is fused) only an explicit restriction counts.
    dateparser runs on the query only when it holds a word that can start a time expression (~2 ms then)."""
    if time_from is not None or time_to is not None:
        period = Period(start=time_from or date.min, end=time_to or date.max)
        restrict = time_filter == "restrict"
        if not fused:
            return TimeQuery(period=period, restrict=True) if restrict else TimeQuery()
        return TimeQuery(asks_when=asks_for_time(query), period=period, restrict=restrict)
    if not fused:
        return TimeQuery()
    named = named_period(query=query, now=now) if TIME_WORD.search(query) else None
    return TimeQuery(asks_when=asks_for_time(query), period=named)


SEARCH_TOP_K_MAX = 100


def search_options_errors(
    *,
    query: str,
    top_k: int,
    mode: str,
    modes: Sequence[str],
    time_from: date | None,
    time_to: date | None,
    time_filter: str,
) -> dict[str, list[str]]:
    """The errors, by field, of the options fact search and message search share (empty when they are valid)."""
    errors = time_query_validate(time_from=time_from, time_to=time_to, time_filter=time_filter)
    if not query.strip():
        errors["query"] = ["must not be empty"]
    if not 1 <= top_k <= SEARCH_TOP_K_MAX:
        errors["top_k"] = [f"must be between 1 and {SEARCH_TOP_K_MAX}"]
    if mode not in modes:
        errors["mode"] = [f"must be one of {', '.join(modes)}"]
    return errors


def time_query_validate(*, time_from: date | None, time_to: date | None, time_filter: str) -> dict[str, list[str]]:
    """The errors of a search's time options, by field (empty when they are valid)."""
    errors = {}
    if time_from is not None and time_to is not None and time_from > time_to:
        errors["time_to"] = ["must not be before time_from"]
    if time_filter not in TIME_FILTERS:
        errors["time_filter"] = [f"must be one of {', '.join(TIME_FILTERS)}"]
    elif time_filter == "restrict" and time_from is None and time_to is None:
        errors["time_filter"] = ["'restrict' needs time_from or time_to"]
    return errors


def time_ranking(
    *, order: Sequence[int], dates: dict[int, tuple[datetime, date | None]], time_query: TimeQuery
) -> list[int]:
    """The time signal: the candidates (`order`, best first by the other signals) that hold the time the query is
    about, in that order. `dates` gives each candidate's (when it was said or became valid, the date its text
    refers to). For a query asking when: the candidates whose text names a time (the answer to "When did ...?" is
    in a turn that says "yesterday" or "last May"); for a period: those said, or referring to a day, within it."""

    def holds(item: int) -> bool:
        said_at, refers_to = dates.get(item, (None, None))
        if time_query.period is not None:
            return time_query.period.holds(refers_to) or (
                said_at is not None and time_query.period.holds(said_at.astimezone(UTC).date())
            )
        return refers_to is not None

    return [item for item in order if holds(item)] if time_query.active else []
