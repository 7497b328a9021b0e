"""The kept search statistics (core.models.CorpusStatistics plus the changes not folded yet) against a recount of the
rows they describe, for tests that check the triggers keep them exact."""

from __future__ import annotations

from django.db import connection


def corpus_statistics_kept() -> dict[tuple[str, int, int], tuple[int, int]]:
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT corpus, space_id, scope_id, sum(documents), sum(lexemes) FROM (
                SELECT corpus, space_id, scope_id, documents, lexemes FROM core_corpusstatistics
                UNION ALL
                SELECT corpus, space_id, scope_id, documents, lexemes FROM core_corpusstatisticschange
            ) AS kept GROUP BY 1, 2, 3 HAVING sum(documents) <> 0 OR sum(lexemes) <> 0
            """
        )
        return {(corpus, space, scope): (int(d), int(n)) for corpus, space, scope, d, n in cursor.fetchall()}


def corpus_statistics_recount() -> dict[tuple[str, int, int], tuple[int, int]]:
    """What the statistics describe, counted from the facts and messages themselves (not from the copies on the
    embedding rows, which the triggers also maintain)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT CASE WHEN 'agent' = ANY(fact.scopes) THEN 'facts.shared' ELSE 'facts.own' END, embedding.space_id,
                   CASE WHEN 'agent' = ANY(fact.scopes) THEN fact.agent_id ELSE fact.user_id END,
                   count(*), sum(length(fact.search_vector))
            FROM facts_factembedding AS embedding JOIN facts_fact AS fact ON fact.id = embedding.fact_id
            WHERE fact.valid_to IS NULL GROUP BY 1, 2, 3
            UNION ALL
            SELECT 'messages', space_id, user_id, count(*), sum(length(to_tsvector('english', search_text)))
            FROM conversations_messageembedding GROUP BY 1, 2, 3
            """
        )
        return {(corpus, space, scope): (int(d), int(n)) for corpus, space, scope, d, n in cursor.fetchall()}
