"""SQL of the database triggers that keep search data in step with the rows it derives from, for the migrations
that install them (facts 0004, conversations 0005). Kept in the database rather than in services because every write
path must keep them exact, including bulk imports, re-embedding and the cascades of an erasure, which delete rows
without passing through any service.

What they maintain (docs/architecture.md, "Search statistics are kept by the database"):
- core_corpusstatistics(change): the document count and total lexeme count of each searchable scope, appended as
  changes by statement-level triggers on the embedding tables and folded by `corpus_statistics_fold`;
- facts_factembedding.valid_from / valid_to / search_lexemes: copies of the fact version's, so that vector search
  filters on the embedding table alone.

Migrations call these functions: change what they generate only by adding new functions for new migrations."""

from __future__ import annotations


def statistics_trigger_sql(
    *, table: str, function: str, corpus_sql: str, scope_sql: str, lexemes_sql: str, current_sql: str
) -> str:
    """A statement-level trigger function and its INSERT, UPDATE and DELETE triggers on `table`: every statement
    appends one change row per (corpus, space, scope) it touched, with the documents and lexemes it removed (old rows)
    and added (new rows). `current_sql` says which rows count as documents."""
    changes = "\n".join(
        f"""
        IF TG_OP <> '{skip}' THEN
            INSERT INTO core_corpusstatisticschange (corpus, space_id, scope_id, documents, lexemes)
            SELECT {corpus_sql}, space_id, {scope_sql}, {sign}count(*), {sign}coalesce(sum({lexemes_sql}), 0)
            FROM {rows} WHERE {current_sql} GROUP BY 1, 2, 3;
        END IF;"""
        for skip, rows, sign in (("INSERT", "old_rows", "-"), ("DELETE", "new_rows", ""))
    )
    return f"""
        CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN{changes}
            RETURN NULL;
        END $$;
        CREATE TRIGGER {function}_insert AFTER INSERT ON {table}
            REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION {function}();
        CREATE TRIGGER {function}_update AFTER UPDATE ON {table}
            REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION {function}();
        CREATE TRIGGER {function}_delete AFTER DELETE ON {table}
            REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION {function}();
    """


def statistics_initial_sql(*, table: str, corpus_sql: str, scope_sql: str, lexemes_sql: str, current_sql: str) -> str:
    """The statistics of the rows already stored, when the triggers are installed."""
    return f"""
        INSERT INTO core_corpusstatistics (corpus, space_id, scope_id, documents, lexemes)
        SELECT {corpus_sql}, space_id, {scope_sql}, count(*), coalesce(sum({lexemes_sql}), 0)
        FROM {table} WHERE {current_sql} GROUP BY 1, 2, 3;
    """


def space_hnsw_indexes_drop_sql(*, table: str) -> str:
    """Drop the per-space HNSW indexes over the whole table (`<table>_s<space>_hnsw`), which vector search no longer
    uses: a scope's rows are scanned exactly, or through a per-agent index (facts.selectors.vector_indexes)."""
    return f"""
        DO $$
        DECLARE index_name text;
        BEGIN
            FOR index_name IN SELECT indexname FROM pg_indexes
                              WHERE tablename = '{table}' AND indexname ~ '^{table}_s[0-9]+_hnsw$'
            LOOP
                EXECUTE format('DROP INDEX IF EXISTS %I', index_name);
            END LOOP;
        END $$;
    """
