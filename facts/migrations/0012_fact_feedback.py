import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0001_initial"),
        ("facts", "0011_fact_expiry"),
    ]

    operations = [
        migrations.CreateModel(
            name="FactFeedback",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "lineage",
                    models.UUIDField(db_index=True, help_text="The fact's lineage: feedback counts follow the fact."),
                ),
                (
                    "rating",
                    models.CharField(
                        choices=[
                            ("useful", "useful"),
                            ("wrong", "wrong"),
                            ("outdated", "outdated"),
                            ("harmful", "harmful"),
                        ],
                        max_length=10,
                    ),
                ),
                ("note", models.TextField(blank=True)),
                ("given_via", models.CharField(help_text="api or tool.", max_length=10)),
                (
                    "outcome",
                    models.CharField(
                        choices=[
                            ("recorded", "recorded"),
                            ("closed", "closed the fact"),
                            ("pending_review", "waiting for an operator's review"),
                            ("accepted", "accepted by an operator: the fact was closed"),
                            ("dismissed", "dismissed by an operator"),
                        ],
                        default="recorded",
                        max_length=16,
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("decided_at", models.DateTimeField(blank=True, null=True)),
                ("decided_by", models.CharField(blank=True, max_length=200)),
                (
                    "agent",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="agents.agent"),
                ),
                (
                    "fact",
                    models.ForeignKey(
                        help_text="The version rated.",
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="feedback",
                        to="facts.fact",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        blank=True,
                        help_text="The end user it was given on behalf of; empty: the agent's own.",
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="agents.enduser",
                    ),
                ),
            ],
            options={
                "verbose_name": "fact feedback",
                "verbose_name_plural": "fact feedback",
                "indexes": [
                    models.Index(
                        condition=models.Q(("outcome", "pending_review")),
                        fields=["agent", "created_at"],
                        name="factfeedback_pending",
                    )
                ],
            },
        ),
    ]
