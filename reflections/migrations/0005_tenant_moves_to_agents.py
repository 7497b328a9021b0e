"""Reflections point at the tenant in agents/: the foreign keys' columns and constraints are unchanged (same tables)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0001_initial'),
        ('reflections', '0004_blob_curated_content'),
    ]

    operations = [
        # The tables stay where they are: only Django's record of which app owns them changes.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='consolidatedmemory',
                    name='agent',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='consolidated_memories', to='agents.agent'),
                ),
                migrations.AlterField(
                    model_name='consolidatedmemory',
                    name='user',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.enduser'),
                ),
                migrations.AlterField(
                    model_name='consolidationjob',
                    name='agent',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='consolidation_jobs', to='agents.agent'),
                ),
                migrations.AlterField(
                    model_name='consolidationjob',
                    name='user',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.enduser'),
                ),
                migrations.AlterField(
                    model_name='reflection',
                    name='agent',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='reflections', to='agents.agent'),
                ),
                migrations.AlterField(
                    model_name='reflection',
                    name='user',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='reflections', to='agents.enduser'),
                ),
            ],
        ),
    ]
