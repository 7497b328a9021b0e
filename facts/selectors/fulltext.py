"""The full-text signal of fact search: BM25 over the facts' `search_vector` lexemes (core.retrieval).

A question's words are OR-matched and ranked by BM25 with the document frequencies of the caller's whole scope, so a
word every fact shares (the user's name) counts for little and a rare one decides. AND-ing every word
(`websearch_to_tsquery`) matched almost no LoCoMo observation for a natural question (recall@10 10.5 on the dev
split, against 58.7 for BM25; docs/benchmarks.md)."""

from __future__ import annotations

from datetime import datetime

import numpy as np
from django.db.models import F, FloatField, QuerySet, Value
from pgvector.django import CosineDistance

from core.retrieval import bm25_ranking
from facts.models import TEXT_SEARCH_CONFIG, FactEmbedding


def facts_text_ranking(
    *, parts: list[QuerySet[FactEmbedding]], query: str, vector: np.ndarray | None, limit: int
) -> list[tuple[int, float, float | None, datetime, float]]:
    """(fact id, BM25 score, cosine similarity or None, valid_from, strength) of the facts of the scope matching any
    query word, best first (strength: core.retrieval.bm25_ranking). `parts` together are the caller's scope (the
    user's own rows, the agent-wide rows); each is planned on its own (UNION ALL), so the selective part keeps its
    own index."""
    branches, params = [], []
    for part in parts:
        documents = part.annotate(document_id=F("fact_id"), document_tsv=F("fact__search_vector"))
        sql, part_params = documents.values_list("document_id", "document_tsv").query.sql_with_params()
        branches.append(f"SELECT document_id AS id, document_tsv AS tsv FROM ({sql}) AS part")
        params += part_params
    ranked = bm25_ranking(
        scope_sql=" UNION ALL ".join(branches), scope_params=params, query=query, config=TEXT_SEARCH_CONFIG, limit=limit
    )
    if not ranked:
        return []
    cosine = CosineDistance("embedding", vector) if vector is not None else Value(None, FloatField())
    ids = [fact_id for fact_id, _, _ in ranked]
    details: dict[int, tuple[float | None, datetime]] = {}
    for part in parts:
        rows = (
            part.filter(fact_id__in=ids)
            .annotate(distance=cosine)
            .values_list("fact_id", "distance", "fact__valid_from")
        )
        details.update({fact_id: (distance, valid_from) for fact_id, distance, valid_from in rows})
    return [
        (
            fact_id,
            score,
            None if details[fact_id][0] is None else 1.0 - details[fact_id][0],
            details[fact_id][1],
            strength,
        )
        for fact_id, score, strength in ranked
    ]
