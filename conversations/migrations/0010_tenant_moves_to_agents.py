"""Agent, AgentAPIKey and EndUser moved to agents/ with their tables; conversations' foreign keys point there."""

import django.db.models.deletion
from django.db import migrations, models

MOVED = {("conversations", "agent"), ("conversations", "agentapikey"), ("conversations", "enduser"), ("core", "erasurerecord")}


def content_types_follow(apps, schema_editor, *, to_app: str, moved: set[tuple[str, str]]) -> None:
    """Permissions, admin log entries and anything else keyed by content type follow the models to their new app."""
    content_type = apps.get_model("contenttypes", "ContentType")
    for app_label, model in moved:
        destination = (to_app, model) if to_app else next((a, m) for a, m in MOVED if m == model)
        if not content_type.objects.filter(app_label=destination[0], model=model).exists():
            content_type.objects.filter(app_label=app_label, model=model).update(app_label=destination[0])


def forwards(apps, schema_editor):
    content_types_follow(apps, schema_editor, to_app="agents", moved=MOVED)


def backwards(apps, schema_editor):
    content_types_follow(apps, schema_editor, to_app="", moved={("agents", model) for _, model in MOVED})


class Migration(migrations.Migration):

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('agents', '0001_initial'),
        ('conversations', '0009_messageembedding_refers_to'),
        ('core', '0008_agent_records_move_to_agents'),
        ('facts', '0007_tenant_moves_to_agents'),
        ('reflections', '0005_tenant_moves_to_agents'),
    ]

    operations = [
        # The tables stay where they are: only Django's record of which app owns them changes.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='messageembedding',
                    name='agent',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.agent'),
                ),
                migrations.AlterField(
                    model_name='retentionrun',
                    name='agent',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='retention_runs', to='agents.agent'),
                ),
                migrations.RemoveField(
                    model_name='enduser',
                    name='agent',
                ),
                migrations.AlterField(
                    model_name='heldmemory',
                    name='agent',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='held_memories', to='agents.agent'),
                ),
                migrations.AlterField(
                    model_name='session',
                    name='agent',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='sessions', to='agents.agent'),
                ),
                migrations.AlterField(
                    model_name='heldmemory',
                    name='user',
                    field=models.ForeignKey(blank=True, help_text='Who said it.', null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.enduser'),
                ),
                migrations.AlterField(
                    model_name='session',
                    name='user',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='sessions', to='agents.enduser'),
                ),
                migrations.AlterField(
                    model_name='messageembedding',
                    name='user',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.enduser'),
                ),
                migrations.DeleteModel(
                    name='AgentAPIKey',
                ),
                migrations.DeleteModel(
                    name='Agent',
                ),
                migrations.DeleteModel(
                    name='EndUser',
                ),
            ],
        ),
        migrations.RunPython(forwards, backwards),
    ]
