"""The full-text signal of fact search: BM25 over the facts' `search_vector` lexemes (core.search.retrieval).

A question's words are OR-matched and ranked by BM25 with the statistics of the caller's whole scope, so a word every
fact shares (the user's name) counts for little and a rare one decides. AND-ing every word (`websearch_to_tsquery`)
matched almost no LoCoMo observation for a natural question (recall@10 10.5 on the dev split, against 58.7 for BM25;
docs/benchmarks/history.md).

Current facts are matched through one GIN index per scope kind (btree_gin: the agent or the user, then the
tsvector), so a search reads its scope's matches and nothing of other agents' or users'. Searches of history or as of
a date match through the plain GIN index and filter by scope; they use the current corpus's statistics."""

from __future__ import annotations

from core.search.retrieval import bm25_ranking
from facts.selectors.search_scope import SHARED_SQL, FactSearchScope


def _matched_sql(scope: FactSearchScope) -> tuple[str, list]:
    """id and tsv of the scope's facts matching the query (the CTE `query` of bm25_ranking)."""
    filters, filter_params = scope.fact_filters_sql(alias="fact")
    matches = "fact.search_vector @@ query.tsquery"
    if scope.current_only:
        unexpired, _ = scope.unexpired_sql(alias="fact")
        branches = [
            (
                f"fact.agent_id = %s::bigint AND fact.valid_to IS NULL AND fact.{SHARED_SQL} AND {unexpired}",
                [scope.agent_id],
            )
        ]
        if scope.user_id is not None:
            branches.append(
                (
                    f"fact.user_id = %s::bigint AND fact.valid_to IS NULL AND NOT (fact.{SHARED_SQL}) AND {unexpired}",
                    [scope.user_id],
                )
            )
    else:
        validity, validity_params = scope.validity_sql(alias="fact")
        visible = f"fact.{SHARED_SQL}" + (" OR fact.user_id = %s::bigint" if scope.user_id is not None else "")
        visible_params = [scope.user_id] if scope.user_id is not None else []
        branches = [
            (
                f"fact.agent_id = %s::bigint AND ({visible}) AND {validity}",
                [scope.agent_id, *visible_params, *validity_params],
            )
        ]
    sqls, params = [], []
    for condition, condition_params in branches:
        sqls.append(
            f"SELECT fact.id, fact.search_vector AS tsv FROM facts_fact AS fact, query "
            f"WHERE {condition} AND {filters} AND {matches}"
        )
        params += [*condition_params, *filter_params]
    return " UNION ALL ".join(sqls), params


def facts_text_ranking(*, scope: FactSearchScope, query: str, limit: int) -> list[tuple[int, float, float]]:
    """(fact id, BM25 score, strength) of the scope's facts matching any query word, best first (strength:
    core.search.retrieval.bm25_ranking). It needs no query vector, so it runs while the query is embedded; the matches'
    similarity and validity come with the vector ranking."""
    matched_sql, matched_params = _matched_sql(scope)
    return bm25_ranking(
        corpora=scope.corpora,
        matched_sql=matched_sql,
        matched_params=matched_params,
        query=query,
        limit=limit,
        count_repeats=False,  # atomic statements: see bm25_ranking
    )
