"""Facts point at the tenant in agents/: the foreign keys' columns and constraints are unchanged (same tables)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0001_initial'),
        ('facts', '0006_fact_refers_to'),
    ]

    operations = [
        # The tables stay where they are: only Django's record of which app owns them changes.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='fact',
                    name='agent',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='facts', to='agents.agent'),
                ),
                migrations.AlterField(
                    model_name='fact',
                    name='user',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='facts', to='agents.enduser'),
                ),
                migrations.AlterField(
                    model_name='factembedding',
                    name='agent',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.agent'),
                ),
                migrations.AlterField(
                    model_name='factembedding',
                    name='restricted_to_user',
                    field=models.ForeignKey(db_index=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.enduser'),
                ),
                migrations.AlterField(
                    model_name='referencechunkembedding',
                    name='agent',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.agent'),
                ),
                migrations.AlterField(
                    model_name='referencedocument',
                    name='agent',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='reference_documents', to='agents.agent'),
                ),
            ],
        ),
    ]
