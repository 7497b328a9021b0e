"""The vector signal of fact search, and the details of the full-text matches, in one statement on
facts_factembedding (which copies each fact version's visibility and validity, so no join to facts_fact is needed).

The access path follows the size of each part of the scope:
- the user's own vectors: an exact scan of their rows through the (space, agent, restricted_to_user) btree;
- the agent-wide vectors: an exact scan while the agent has fewer than MEMORY_SEARCH_HNSW_MIN_SHARED_FACTS current
  ones, counted by the kept corpus statistics, not guessed; above that, the agent's own partial HNSW index
  (facts.services.vector_indexes builds it). Both branches are in the statement and a one-time filter on the count runs
  exactly one of them. Measured at 1M facts (docs/benchmarks/history.md): an exact scan costs ~1.2 µs a row, so ~12 ms
  for an agent with 10k agent-wide facts, where its HNSW index answers in ~3 ms at recall@10 ≥ 0.95; one HNSW index over
  all agents' vectors, filtered by agent, missed a fifth of the results at 1M (iterative scans ran out of tuples)."""

from __future__ import annotations

from datetime import datetime

import numpy as np
from django.conf import settings

from core.runtime.db_routers import search_connection
from core.search.retrieval import CorpusKey, corpus_statistics_sql, vector_literal
from facts.selectors.search_scope import CORPUS_SHARED, FactSearchScope
from facts.services.vector_indexes import fact_vector_index_expression

_COLUMNS = "fact_id, {distance} AS distance, valid_from, {text_match} AS text_match"


def _filters_sql(scope: FactSearchScope) -> tuple[str, list]:
    """The caller's scopes, tags and period filters live on facts_fact: checked per candidate, only when asked for."""
    if not scope.filtered:
        return "true", []
    filters, params = scope.fact_filters_sql(alias="fact")
    return f"EXISTS (SELECT 1 FROM facts_fact AS fact WHERE fact.id = embedding.fact_id AND {filters})", params


_QUERY_DISTANCE = "embedding.embedding <=> (SELECT vector FROM query_vector)"


def _nearest_sql(*, where: str, distance: str, order: str, limit: int) -> str:
    return (
        f"(SELECT {_COLUMNS.format(distance=distance, text_match='false')} FROM facts_factembedding AS embedding "
        f"WHERE {where} ORDER BY {order} LIMIT {int(limit)})"
    )


def _vector_branches(scope: FactSearchScope, *, limit: int) -> list[tuple[str, list]]:
    """(SQL, params) of each scope part's nearest vectors. The exact branches order by the uncast column, which no
    index matches, so the planner scans the part's rows; the HNSW branch orders by the agent's index expression (half
    precision) and returns the full-precision distance."""
    base = "embedding.space_id = %s::bigint AND embedding.agent_id = %s::bigint"
    validity, validity_params = scope.validity_sql(alias="embedding")
    filters, filter_params = _filters_sql(scope)
    branches = []
    if scope.user_id is not None:
        own = f"{base} AND embedding.restricted_to_user_id = %s::bigint AND {validity} AND {filters}"
        own_sql = _nearest_sql(where=own, distance=_QUERY_DISTANCE, order="distance, fact_id", limit=limit)
        branches.append((own_sql, [scope.space_id, scope.agent_id, scope.user_id, *validity_params, *filter_params]))
    shared = f"{base} AND embedding.restricted_to_user_id IS NULL AND {validity} AND {filters}"
    shared_params = [scope.space_id, scope.agent_id, *validity_params, *filter_params]
    if not scope.current_only:  # the per-agent indexes hold current versions only
        branches.append(
            (
                _nearest_sql(where=shared, distance=_QUERY_DISTANCE, order="distance, fact_id", limit=limit),
                shared_params,
            )
        )
        return branches
    count_sql, count_params = corpus_statistics_sql(
        corpora=[CorpusKey(corpus=CORPUS_SHARED, space_id=scope.space_id, scope_id=scope.agent_id)]
    )
    kept_count = f"(SELECT documents FROM ({count_sql}) AS kept)"
    threshold = int(settings.MEMORY_SEARCH_HNSW_MIN_SHARED_FACTS)
    exact_sql = _nearest_sql(
        where=f"{shared} AND {kept_count} < {threshold}",
        distance=_QUERY_DISTANCE,
        order="distance, fact_id",
        limit=limit,
    )
    indexed = fact_vector_index_expression(column="embedding.embedding", dimensions=scope.dimensions)
    hnsw_sql = _nearest_sql(
        where=f"{shared} AND {kept_count} >= {threshold}",
        distance=_QUERY_DISTANCE,  # full precision: the index only orders
        order=f"{indexed} <=> (SELECT vector FROM query_vector)::halfvec({int(scope.dimensions)})",
        limit=limit,
    )
    return [*branches, (exact_sql, [*shared_params, *count_params]), (hnsw_sql, [*shared_params, *count_params])]


def _text_details_branch(scope: FactSearchScope, *, text_ids: list[int], with_vector: bool) -> tuple[str, list]:
    """Similarity and valid_from of the full-text matches. fact_embedding_unique: one row per fact and space, and
    these facts were ranked from the caller's scope."""
    distance = _QUERY_DISTANCE if with_vector else "NULL::float"
    sql = (
        f"(SELECT {_COLUMNS.format(distance=distance, text_match='true')} FROM facts_factembedding AS embedding "
        f"WHERE embedding.space_id = %s::bigint AND embedding.fact_id = ANY(%s::bigint[]))"
    )
    return sql, [scope.space_id, text_ids]


def facts_vector_ranking(
    *, scope: FactSearchScope, vector: np.ndarray | None, limit: int, text_ids: list[int]
) -> tuple[list[tuple[int, float, datetime]], dict[int, tuple[float | None, datetime]]]:
    """In one round trip: the vector ranking, (fact id, cosine similarity, valid_from) most similar first, when
    there is a vector; and (cosine similarity or None, valid_from) of each full-text match in `text_ids` that has a
    vector in the space.

    The SET LOCALs and the query go as one simple-protocol message, which PostgreSQL runs as one (implicit)
    transaction; that needs Django's default client-side parameter binding (with psycopg's `server_side_binding` the
    statement would be prepared, and PostgreSQL refuses several commands in one)."""
    branches = _vector_branches(scope, limit=limit) if vector is not None else []
    if text_ids:
        branches.append(_text_details_branch(scope, text_ids=text_ids, with_vector=vector is not None))
    if not branches:
        return [], {}
    sql = " UNION ALL ".join(branch for branch, _ in branches)
    params = [param for _, branch_params in branches for param in branch_params]
    settings_sql = ""
    if vector is not None:
        # The query vector is sent once, as the statement's one vector literal: each literal costs the server a parse
        # of 384 numbers, and the text of four cost ~1 ms a search. HNSW orders by it as well from a CTE.
        sql = f"WITH query_vector AS (SELECT %s::vector({int(scope.dimensions)}) AS vector) {sql}"
        params = [vector_literal(vector), *params]
        ef_search = int(max(settings.MEMORY_SEARCH_HNSW_EF_SEARCH, limit))
        settings_sql = f"SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = {ef_search}; "
    with search_connection().cursor() as cursor:
        cursor.execute(settings_sql + sql, params)
        while cursor.description is None and cursor.nextset():
            pass
        rows = cursor.fetchall()
    nearest = [(fact_id, distance, valid_from) for fact_id, distance, valid_from, text_match in rows if not text_match]
    # relaxed_order may return the HNSW rows slightly out of order, and the parts need merging anyway.
    nearest.sort(key=lambda row: (row[1], row[0]))
    text_details = {
        fact_id: (None if distance is None else 1.0 - distance, valid_from)
        for fact_id, distance, valid_from, text_match in rows
        if text_match
    }
    return [(fact_id, 1.0 - distance, valid_from) for fact_id, distance, valid_from in nearest[:limit]], text_details
