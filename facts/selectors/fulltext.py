"""The full-text signal of fact search: BM25 over the facts' `search_vector` lexemes (core.retrieval).

A question's words are OR-matched and ranked by BM25 with the document frequencies of the caller's whole scope, so a
word every fact shares (the user's name) counts for little and a rare one decides. AND-ing every word
(`websearch_to_tsquery`) matched almost no LoCoMo observation for a natural question (recall@10 10.5 on the dev
split, against 58.7 for BM25; docs/benchmarks.md)."""

from __future__ import annotations

from django.db.models import F, QuerySet

from core.retrieval import bm25_ranking
from facts.models import TEXT_SEARCH_CONFIG, FactEmbedding


def facts_text_ranking(
    *, parts: list[QuerySet[FactEmbedding]], query: str, limit: int
) -> list[tuple[int, float, float]]:
    """(fact id, BM25 score, strength) of the facts of the scope matching any query word, best first (strength:
    core.retrieval.bm25_ranking). `parts` together are the caller's scope (the user's own rows, the agent-wide rows);
    each is planned on its own (UNION ALL), so the selective part keeps its own index. It needs no query vector, so
    it runs while the query is embedded; the matches' similarity and valid_from come with the vector ranking."""
    branches, params = [], []
    for part in parts:
        documents = part.annotate(document_id=F("fact_id"), document_tsv=F("fact__search_vector"))
        sql, part_params = documents.values_list("document_id", "document_tsv").query.sql_with_params()
        branches.append(f"SELECT document_id AS id, document_tsv AS tsv FROM ({sql}) AS part")
        params += part_params
    return bm25_ranking(
        scope_sql=" UNION ALL ".join(branches), scope_params=params, query=query, config=TEXT_SEARCH_CONFIG, limit=limit
    )
