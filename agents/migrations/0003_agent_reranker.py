from django.db import migrations, models


class Migration(migrations.Migration):
    """Each agent chooses the rerank step of its searches: off (the default, so existing agents search as before), a
    rerank server, or the LLM."""

    dependencies = [
        ("agents", "0002_operator_keys"),
    ]

    operations = [
        migrations.AddField(
            model_name="agent",
            name="reranker",
            field=models.CharField(
                choices=[
                    ("off", "off: the fused order"),
                    ("http", "a rerank server (RERANK_URL: TEI, Infinity, vLLM, Jina, Cohere)"),
                    ("llm", "the configured LLM, ranking the passages listwise"),
                ],
                default="off",
                help_text="Reorders the top RERANK_TOP_N of each hybrid fact and turn search after fusion: a rerank "
                "server (RERANK_URL) or the configured LLM (its tokens count against the budget below). Adds its "
                "latency to every search; when it fails, the fused order is kept (docs/operations/runbook.md).",
                max_length=8,
            ),
        ),
    ]
