"""Message search rows: the text a message was embedded from is stored on its embedding row with its full-text vector
and a GIN index per user, instead of being rendered and parsed on every search; the corpus statistics of each user's
messages are kept by triggers; the per-space HNSW index over every user's messages goes (message search is always
within one user's messages, an exact scan)."""

import django.contrib.postgres.indexes
import django.contrib.postgres.search
from django.db import migrations, models

from core.search.triggers import space_hnsw_indexes_drop_sql, statistics_initial_sql, statistics_trigger_sql

MESSAGE_STATISTICS = {
    "table": "conversations_messageembedding",
    "corpus_sql": "'messages'",
    "scope_sql": "user_id",
    "lexemes_sql": "length(search_vector)",
    "current_sql": "true",
}

# What conversations.services.message_embeddings.message_search_text renders, for the rows embedded before this
# migration: "<previous speaker>: <previous content>\n<speaker>: <content>".
_SPEAKER = "coalesce(nullif({t}.metadata->>'speaker', ''), nullif({t}.metadata->>'name', ''), {t}.role)"
SEARCH_TEXT_BACKFILL = f"""
    UPDATE conversations_messageembedding AS embedding
    SET search_text = coalesce({_SPEAKER.format(t="previous")} || ': ' || previous.content || E'\\n', '')
                      || {_SPEAKER.format(t="message")} || ': ' || message.content
    FROM conversations_message AS message
    LEFT JOIN LATERAL (
        SELECT before.content, before.role, before.metadata FROM conversations_message AS before
        WHERE before.session_id = message.session_id AND before.id < message.id
        ORDER BY before.id DESC LIMIT 1
    ) AS previous ON true
    WHERE message.id = embedding.message_id;
"""

DROP_TRIGGERS = """
    DROP TRIGGER IF EXISTS conversations_message_statistics_insert ON conversations_messageembedding;
    DROP TRIGGER IF EXISTS conversations_message_statistics_update ON conversations_messageembedding;
    DROP TRIGGER IF EXISTS conversations_message_statistics_delete ON conversations_messageembedding;
    DROP FUNCTION IF EXISTS conversations_message_statistics();
    DELETE FROM core_corpusstatistics WHERE corpus = 'messages';
    DELETE FROM core_corpusstatisticschange WHERE corpus = 'messages';
"""


class Migration(migrations.Migration):
    dependencies = [
        ("conversations", "0004_profile_switch_and_retention"),
        ("core", "0004_corpus_statistics"),
    ]

    operations = [
        # First: every row below is rewritten, and each rewrite would be inserted into this index again.
        migrations.RunSQL(
            space_hnsw_indexes_drop_sql(table="conversations_messageembedding"), migrations.RunSQL.noop
        ),
        migrations.AddField(
            model_name="messageembedding",
            name="search_text",
            field=models.TextField(default="", help_text="What was embedded and is full-text searched."),
        ),
        migrations.RunSQL(SEARCH_TEXT_BACKFILL, migrations.RunSQL.noop),
        migrations.AddField(
            model_name="messageembedding",
            name="search_vector",
            field=models.GeneratedField(
                db_persist=True,
                expression=django.contrib.postgres.search.SearchVector("search_text", config="english"),
                output_field=django.contrib.postgres.search.SearchVectorField(),
            ),
        ),
        migrations.AddIndex(
            model_name="messageembedding",
            index=django.contrib.postgres.indexes.GinIndex(
                fastupdate=True,
                fields=["user", "search_vector"],
                gin_pending_list_limit=256,
                name="message_embedding_user_text",
            ),
        ),
        migrations.RunSQL(
            statistics_trigger_sql(function="conversations_message_statistics", **MESSAGE_STATISTICS)
            + statistics_initial_sql(**MESSAGE_STATISTICS),
            DROP_TRIGGERS,
        ),
    ]
