"""Ranking pieces shared by fact search and message search: BM25 over PostgreSQL's lexemes, and weighted reciprocal
rank fusion.

Why BM25 rather than `websearch_to_tsquery` + `ts_rank_cd` (measured on the LoCoMo dev split, docs/benchmarks.md):
AND-ing every word of a question matches almost nothing (recall@10 2-25%), and an OR query ranked by ts_rank lets a
word that is everywhere (the user's name) outrank the rare word that matters, because ts_rank has no inverse document
frequency. BM25 over the same lexemes, OR-matched, with document frequencies taken from the searched scope, was the
strongest single signal on both corpora.

Every document holding any query lexeme matches the OR query, so the document frequencies computed over the matched
rows are exactly those of the whole scope; only the scope's size is counted separately. The average document length
is that of the matched rows (reading every document of a large scope for it would cost more than it changes)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
from django.conf import settings
from django.db import connection

from core.embeddings.providers import EmbeddingProvider

BM25_K1 = 1.2
BM25_B = 0.75
# Full-text matches covering at least this share of the query's IDF count fully in fusion; weaker ones in proportion.
FULL_STRENGTH_COVERAGE = 0.2

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
    return _query_embedding_pool.submit(lambda: _query_vector_remember(key=key, vector=provider.embed_one(text)))


def bm25_ranking(
    *, scope_sql: str, scope_params: Sequence, query: str, config: str, limit: int
) -> list[tuple[int, float, float]]:
    """(id, BM25 score, strength) of the scope's documents matching any lexeme of `query`, best first. Strength is
    min(1, coverage / FULL_STRENGTH_COVERAGE)², coverage being the share of the query's inverse document frequency
    that the document matches (1.0: every query word, 0.05: only a word most documents have). Fusion scales the
    full-text signal by it, so a document that matched only the user's name cannot outrank the vector signal's best,
    while one that matched a fair part of the question keeps its full weight (LoCoMo dev split: scaling by coverage
    itself cost 1 to 2 points of recall@10, this threshold nothing measurable; docs/benchmarks.md).

    `scope_sql` selects `id` and `tsv` (a tsvector in text-search configuration `config`) of every searchable
    document; it is used twice, once filtered by the query (where a GIN index on `tsv` applies) and once counted."""
    sql = f"""
        WITH query AS (
            SELECT array_agg(lexeme) AS lexemes,
                   string_agg(quote_literal(lexeme), ' | ')::tsquery AS tsquery
            FROM unnest(tsvector_to_array(to_tsvector(%s::regconfig, %s))) AS lexeme
        ), matched AS (
            SELECT scope.id, scope.tsv FROM ({scope_sql}) AS scope, query WHERE scope.tsv @@ query.tsquery
        ), terms AS (
            SELECT matched.id, length(matched.tsv) AS length, term.lexeme, cardinality(term.positions) AS tf
            FROM matched, query, unnest(matched.tsv) AS term(lexeme, positions, weights)
            WHERE term.lexeme = ANY(query.lexemes)
        ), frequency AS (
            SELECT lexeme, count(*)::float AS df FROM terms GROUP BY lexeme
        ), stats AS (
            SELECT (SELECT count(*) FROM ({scope_sql}) AS everything)::float AS n,
                   greatest((SELECT avg(length(tsv)) FROM matched), 1)::float AS average_length
        ), idf AS (
            SELECT lexeme, ln(1 + (stats.n - coalesce(frequency.df, 0) + 0.5) / (coalesce(frequency.df, 0) + 0.5))
                   AS idf
            FROM (SELECT unnest(lexemes) AS lexeme FROM query) AS asked LEFT JOIN frequency USING (lexeme), stats
        ), total AS (
            SELECT sum(idf) AS idf FROM idf
        )
        SELECT terms.id,
               sum(idf.idf * terms.tf * (%s + 1)
                   / (terms.tf + %s * (1 - %s + %s * terms.length / stats.average_length))) AS score,
               power(least(1.0, sum(idf.idf) / max(total.idf) / %s), 2) AS strength
        FROM terms JOIN idf USING (lexeme), stats
        CROSS JOIN total
        GROUP BY terms.id
        ORDER BY score DESC, terms.id
        LIMIT %s
    """
    params = [
        config,
        query,
        *scope_params,
        *scope_params,
        BM25_K1,
        BM25_K1,
        BM25_B,
        BM25_B,
        FULL_STRENGTH_COVERAGE,
        limit,
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [(row[0], float(row[1]), float(row[2])) for row in cursor.fetchall()]


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
