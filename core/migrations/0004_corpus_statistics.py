from django.contrib.postgres.operations import BtreeGinExtension
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("core", "0003_erasurerecord")]

    operations = [
        # GIN indexes that lead with a plain column (agent, user) and then the tsvector: one index scan finds a
        # scope's full-text matches without visiting other scopes' rows.
        BtreeGinExtension(),
        migrations.CreateModel(
            name="CorpusStatistics",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("corpus", models.CharField(max_length=20)),
                ("space_id", models.BigIntegerField()),
                ("scope_id", models.BigIntegerField()),
                ("documents", models.BigIntegerField(default=0)),
                ("lexemes", models.BigIntegerField(default=0)),
            ],
            options={"verbose_name_plural": "corpus statistics"},
        ),
        migrations.CreateModel(
            name="CorpusStatisticsChange",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("corpus", models.CharField(max_length=20)),
                ("space_id", models.BigIntegerField()),
                ("scope_id", models.BigIntegerField()),
                ("documents", models.BigIntegerField()),
                ("lexemes", models.BigIntegerField()),
            ],
            options={
                "indexes": [models.Index(fields=["corpus", "space_id", "scope_id"], name="corpus_change_scope")],
            },
        ),
        migrations.AddConstraint(
            model_name="corpusstatistics",
            constraint=models.UniqueConstraint(
                fields=("corpus", "space_id", "scope_id"), name="corpus_statistics_unique"
            ),
        ),
    ]
