from django.db import migrations


def index_active_space(apps, schema_editor):
    """Spaces get their partial HNSW indexes when created; a space created before reference chunks existed needs
    one for the new table (the same statement core.embeddings.spaces runs for a new space)."""
    EmbeddingSpace = apps.get_model("core", "EmbeddingSpace")
    for space in EmbeddingSpace.objects.exclude(status="retired"):
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS facts_referencechunkembedding_s{int(space.pk)}_hnsw "
            f"ON facts_referencechunkembedding USING hnsw ((embedding::vector({int(space.dimensions)})) "
            f"vector_cosine_ops) WHERE space_id = {int(space.pk)}"
        )


class Migration(migrations.Migration):
    dependencies = [("facts", "0002_profile_keys_pinning_reference_documents")]

    operations = [migrations.RunPython(index_active_space, migrations.RunPython.noop)]
