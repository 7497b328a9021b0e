"""FormationJob, HeldMemory and RetentionRun moved to formation/ with their tables."""

from django.db import migrations

MOVED = {"formationjob", "heldmemory", "retentionrun"}


def content_types_move(apps, *, from_app: str, to_app: str) -> None:
    """Permissions, admin log entries and anything else keyed by content type follow the models to their new app."""
    content_type = apps.get_model("contenttypes", "ContentType")
    for model in MOVED:
        if not content_type.objects.filter(app_label=to_app, model=model).exists():
            content_type.objects.filter(app_label=from_app, model=model).update(app_label=to_app)


def forwards(apps, schema_editor):
    content_types_move(apps, from_app="conversations", to_app="formation")


def backwards(apps, schema_editor):
    content_types_move(apps, from_app="formation", to_app="conversations")


class Migration(migrations.Migration):

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('conversations', '0010_tenant_moves_to_agents'),
    ]

    operations = [
        # The tables stay where they are: only Django's record of which app owns them changes.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='heldmemory',
                    name='agent',
                ),
                migrations.RemoveField(
                    model_name='heldmemory',
                    name='session',
                ),
                migrations.RemoveField(
                    model_name='heldmemory',
                    name='source_messages',
                ),
                migrations.RemoveField(
                    model_name='heldmemory',
                    name='user',
                ),
                migrations.RemoveField(
                    model_name='retentionrun',
                    name='agent',
                ),
                migrations.DeleteModel(
                    name='FormationJob',
                ),
                migrations.DeleteModel(
                    name='HeldMemory',
                ),
                migrations.DeleteModel(
                    name='RetentionRun',
                ),
            ],
        ),
        migrations.RunPython(forwards, backwards),
    ]
