"""Fact search rows: the embedding row carries its fact's validity and full-text length (kept by triggers), the
corpus statistics of every scope are kept by triggers, one GIN index per scope kind finds a scope's full-text matches,
and the per-space HNSW indexes over every agent's vectors give way to exact scans and per-agent indexes."""

import django.contrib.postgres.indexes
from django.db import migrations, models

from core.search.triggers import space_hnsw_indexes_drop_sql, statistics_initial_sql, statistics_trigger_sql

FACT_STATISTICS = {
    "table": "facts_factembedding",
    "corpus_sql": "CASE WHEN restricted_to_user_id IS NULL THEN 'facts.shared' ELSE 'facts.own' END",
    "scope_sql": "coalesce(restricted_to_user_id, agent_id)",
    "lexemes_sql": "search_lexemes",
    "current_sql": "valid_to IS NULL",
}

COPY_FACT = """
    UPDATE facts_factembedding AS embedding
    SET valid_from = fact.valid_from, valid_to = fact.valid_to, search_lexemes = length(fact.search_vector)
    FROM facts_fact AS fact WHERE fact.id = embedding.fact_id;

    CREATE FUNCTION facts_embedding_copy_fact() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        SELECT fact.valid_from, fact.valid_to, length(fact.search_vector)
        INTO NEW.valid_from, NEW.valid_to, NEW.search_lexemes
        FROM facts_fact AS fact WHERE fact.id = NEW.fact_id;
        RETURN NEW;
    END $$;
    CREATE TRIGGER facts_embedding_copy_fact BEFORE INSERT ON facts_factembedding
        FOR EACH ROW EXECUTE FUNCTION facts_embedding_copy_fact();

    CREATE FUNCTION facts_fact_embeddings_follow() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE facts_factembedding
        SET valid_from = NEW.valid_from, valid_to = NEW.valid_to, search_lexemes = length(NEW.search_vector)
        WHERE fact_id = NEW.id;
        RETURN NULL;
    END $$;
    CREATE TRIGGER facts_fact_embeddings_follow AFTER UPDATE ON facts_fact FOR EACH ROW
        WHEN (OLD.valid_from IS DISTINCT FROM NEW.valid_from OR OLD.valid_to IS DISTINCT FROM NEW.valid_to
              OR OLD.search_vector IS DISTINCT FROM NEW.search_vector)
        EXECUTE FUNCTION facts_fact_embeddings_follow();
"""

DROP_TRIGGERS = """
    DROP TRIGGER IF EXISTS facts_embedding_statistics_insert ON facts_factembedding;
    DROP TRIGGER IF EXISTS facts_embedding_statistics_update ON facts_factembedding;
    DROP TRIGGER IF EXISTS facts_embedding_statistics_delete ON facts_factembedding;
    DROP FUNCTION IF EXISTS facts_embedding_statistics();
    DROP TRIGGER IF EXISTS facts_fact_embeddings_follow ON facts_fact;
    DROP FUNCTION IF EXISTS facts_fact_embeddings_follow();
    DROP TRIGGER IF EXISTS facts_embedding_copy_fact ON facts_factembedding;
    DROP FUNCTION IF EXISTS facts_embedding_copy_fact();
    DELETE FROM core_corpusstatistics WHERE corpus LIKE 'facts.%';
    DELETE FROM core_corpusstatisticschange WHERE corpus LIKE 'facts.%';
"""


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0004_corpus_statistics"),
        ("facts", "0003_reference_chunk_vector_indexes"),
    ]

    operations = [
        # First: every row below is rewritten, and each rewrite would be inserted into these indexes again.
        migrations.RunSQL(
            space_hnsw_indexes_drop_sql(table="facts_factembedding")
            + space_hnsw_indexes_drop_sql(table="facts_referencechunkembedding"),
            migrations.RunSQL.noop,
        ),
        migrations.AddField(
            model_name="factembedding",
            name="search_lexemes",
            field=models.PositiveIntegerField(
                default=0, editable=False, help_text="Lexemes in the fact's full-text vector, copied by the database."
            ),
        ),
        migrations.AddField(
            model_name="factembedding",
            name="valid_from",
            field=models.DateTimeField(editable=False, help_text="The fact's, copied by the database.", null=True),
        ),
        migrations.AddField(
            model_name="factembedding",
            name="valid_to",
            field=models.DateTimeField(editable=False, help_text="The fact's, copied by the database.", null=True),
        ),
        migrations.RunSQL(
            COPY_FACT
            + statistics_trigger_sql(function="facts_embedding_statistics", **FACT_STATISTICS)
            + statistics_initial_sql(**FACT_STATISTICS),
            DROP_TRIGGERS,
        ),
        migrations.AddIndex(
            model_name="fact",
            index=django.contrib.postgres.indexes.GinIndex(
                condition=models.Q(("valid_to__isnull", True), ("scopes__contains", ["agent"])),
                fastupdate=False,
                fields=["agent", "search_vector"],
                name="fact_shared_current_text",
            ),
        ),
        migrations.AddIndex(
            model_name="fact",
            index=django.contrib.postgres.indexes.GinIndex(
                condition=models.Q(
                    ("valid_to__isnull", True), models.Q(("scopes__contains", ["agent"]), _negated=True)
                ),
                fastupdate=False,
                fields=["user", "search_vector"],
                name="fact_own_current_text",
            ),
        ),
    ]
