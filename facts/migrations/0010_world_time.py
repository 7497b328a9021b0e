"""World time on fact versions and relations (docs/decisions/0039-world-time.md). What an existing row can be given
without guessing: a fact whose text names a day (refers_to) held from that day; a relation, from the earliest such
day of the facts that state it. Everything else stays unknown."""

from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def world_time_from_referred_days(apps, schema_editor):
    Fact = apps.get_model("facts", "Fact")
    Relation = apps.get_model("facts", "Relation")
    Fact.objects.filter(refers_to__isnull=False).update(held_from=models.F("refers_to"), held_from_precision="day")
    earliest = (
        Fact.objects.filter(relations=OuterRef("pk"), refers_to__isnull=False).order_by("refers_to").values("refers_to")
    )
    Relation.objects.update(held_from=Subquery(earliest[:1]))
    Relation.objects.filter(held_from__isnull=False).update(held_from_precision="day")


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0001_initial"),
        ("conversations", "0011_formation_moves_to_formation"),
        ("facts", "0009_relation_said_vector"),
    ]

    operations = [
        migrations.AddField(
            model_name="fact",
            name="held_from",
            field=models.DateField(blank=True, help_text="When the statement began to hold, if known.", null=True),
        ),
        migrations.AddField(
            model_name="fact",
            name="held_from_precision",
            field=models.CharField(
                blank=True,
                choices=[("day", "day"), ("month", "month"), ("year", "year"), ("approximate", "approximate")],
                help_text="How precise.",
                max_length=12,
            ),
        ),
        migrations.AddField(
            model_name="fact",
            name="held_until",
            field=models.DateField(
                blank=True,
                help_text="When it stopped holding (the day the next began), if it did and it is known.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="fact",
            name="held_until_precision",
            field=models.CharField(
                blank=True,
                choices=[
                    ("day", "day"),
                    ("month", "month"),
                    ("year", "year"),
                    ("approximate", "approximate"),
                    ("unknown", "ended, when unknown"),
                ],
                help_text="How precise; 'unknown': it ended, when is not known.",
                max_length=12,
            ),
        ),
        migrations.AddField(
            model_name="relation",
            name="held_from",
            field=models.DateField(blank=True, help_text="When the statement began to hold, if known.", null=True),
        ),
        migrations.AddField(
            model_name="relation",
            name="held_from_precision",
            field=models.CharField(
                blank=True,
                choices=[("day", "day"), ("month", "month"), ("year", "year"), ("approximate", "approximate")],
                help_text="How precise.",
                max_length=12,
            ),
        ),
        migrations.AddField(
            model_name="relation",
            name="held_until",
            field=models.DateField(
                blank=True,
                help_text="When it stopped holding (the day the next began), if it did and it is known.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="relation",
            name="held_until_precision",
            field=models.CharField(
                blank=True,
                choices=[
                    ("day", "day"),
                    ("month", "month"),
                    ("year", "year"),
                    ("approximate", "approximate"),
                    ("unknown", "ended, when unknown"),
                ],
                help_text="How precise; 'unknown': it ended, when is not known.",
                max_length=12,
            ),
        ),
        migrations.RunPython(world_time_from_referred_days, migrations.RunPython.noop, elidable=True),
        migrations.AddConstraint(
            model_name="fact",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("held_from__isnull", True), ("held_from_precision", "")),
                    models.Q(
                        ("held_from__isnull", False),
                        ("held_from_precision__in", ["day", "month", "year", "approximate"]),
                    ),
                    _connector="OR",
                ),
                name="fact_held_from_has_precision",
            ),
        ),
        migrations.AddConstraint(
            model_name="fact",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("held_until__isnull", True), ("held_until_precision__in", ["", "unknown"])),
                    models.Q(
                        ("held_until__isnull", False),
                        ("held_until_precision__in", ["day", "month", "year", "approximate"]),
                    ),
                    _connector="OR",
                ),
                name="fact_held_until_has_precision",
            ),
        ),
        migrations.AddConstraint(
            model_name="fact",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("held_from__isnull", True),
                    ("held_until__isnull", True),
                    ("held_until__gte", models.F("held_from")),
                    _connector="OR",
                ),
                name="fact_held_until_not_before_from",
            ),
        ),
        migrations.AddConstraint(
            model_name="relation",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("held_from__isnull", True), ("held_from_precision", "")),
                    models.Q(
                        ("held_from__isnull", False),
                        ("held_from_precision__in", ["day", "month", "year", "approximate"]),
                    ),
                    _connector="OR",
                ),
                name="relation_held_from_has_precision",
            ),
        ),
        migrations.AddConstraint(
            model_name="relation",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("held_until__isnull", True), ("held_until_precision__in", ["", "unknown"])),
                    models.Q(
                        ("held_until__isnull", False),
                        ("held_until_precision__in", ["day", "month", "year", "approximate"]),
                    ),
                    _connector="OR",
                ),
                name="relation_held_until_has_precision",
            ),
        ),
        migrations.AddConstraint(
            model_name="relation",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("held_from__isnull", True),
                    ("held_until__isnull", True),
                    ("held_until__gte", models.F("held_from")),
                    _connector="OR",
                ),
                name="relation_held_until_not_before_from",
            ),
        ),
    ]
