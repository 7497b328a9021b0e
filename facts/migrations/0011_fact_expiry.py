"""A fact's expiry: the fact leaves search, the context block and the bundle from `expires_at` on (retention then
closes it). The embedding row copies it, as it copies the fact's validity (migration 0004), so the vector signal filters
it on facts_factembedding alone; two triggers of their own keep it in step, beside 0004's."""

from django.db import migrations, models

COPY_EXPIRY = """
    CREATE FUNCTION facts_embedding_copy_expiry() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        SELECT fact.expires_at INTO NEW.expires_at FROM facts_fact AS fact WHERE fact.id = NEW.fact_id;
        RETURN NEW;
    END $$;
    CREATE TRIGGER facts_embedding_copy_expiry BEFORE INSERT ON facts_factembedding
        FOR EACH ROW EXECUTE FUNCTION facts_embedding_copy_expiry();

    CREATE FUNCTION facts_fact_expiry_follow() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE facts_factembedding SET expires_at = NEW.expires_at WHERE fact_id = NEW.id;
        RETURN NULL;
    END $$;
    CREATE TRIGGER facts_fact_expiry_follow AFTER UPDATE ON facts_fact FOR EACH ROW
        WHEN (OLD.expires_at IS DISTINCT FROM NEW.expires_at)
        EXECUTE FUNCTION facts_fact_expiry_follow();
"""

DROP_TRIGGERS = """
    DROP TRIGGER IF EXISTS facts_fact_expiry_follow ON facts_fact;
    DROP FUNCTION IF EXISTS facts_fact_expiry_follow();
    DROP TRIGGER IF EXISTS facts_embedding_copy_expiry ON facts_factembedding;
    DROP FUNCTION IF EXISTS facts_embedding_copy_expiry();
"""


class Migration(migrations.Migration):
    dependencies = [
        ("facts", "0010_world_time"),
    ]

    operations = [
        migrations.AddField(
            model_name="fact",
            name="expires_at",
            field=models.DateTimeField(
                blank=True,
                help_text="From this time the fact leaves search, the context block and the bundle; retention then "
                "closes it.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="factembedding",
            name="expires_at",
            field=models.DateTimeField(editable=False, help_text="The fact's, copied by the database.", null=True),
        ),
        migrations.AddIndex(
            model_name="fact",
            index=models.Index(
                condition=models.Q(("valid_to__isnull", True), ("expires_at__isnull", False)),
                fields=["expires_at"],
                name="fact_current_expiring",
            ),
        ),
        migrations.RunSQL(COPY_EXPIRY, DROP_TRIGGERS),
    ]
