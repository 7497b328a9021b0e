"""Core's records point at the tenant in agents/ (settings.TENANT_MODEL); ErasureRecord moved to agents/ with its table."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0001_initial'),
        ('core', '0007_llmcall_rule_violations'),
    ]

    operations = [
        # The tables stay where they are: only Django's record of which app owns them changes.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='llmcall',
                    name='agent',
                    field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name='llm_calls', to='agents.agent'),
                ),
                migrations.AlterField(
                    model_name='sensitivedatafinding',
                    name='agent',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.agent'),
                ),
                migrations.DeleteModel(
                    name='ErasureRecord',
                ),
            ],
        ),
    ]
