"""The formation pipeline's records move here from conversations/ (FormationJob, HeldMemory with its source messages,
RetentionRun) with their rows: the tables keep their names (db_table), so this only tells Django's state that
formation/ owns them (issue 22)."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('agents', '0001_initial'),
        ('conversations', '0011_formation_moves_to_formation'),
    ]

    operations = [
        # The tables stay where they are: only Django's record of which app owns them changes.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='FormationJob',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('trigger', models.CharField(choices=[('interval', 'message or token interval'), ('cold', 'session went cold'), ('closed', 'session closed'), ('explicit', 'explicit request'), ('sweep', 'sweep of missed work'), ('resumed', 'resumed after waiting')], max_length=10)),
                        ('status', models.CharField(choices=[('running', 'running'), ('succeeded', 'succeeded'), ('failed', 'failed')], default='running', max_length=10)),
                        ('task_id', models.CharField(blank=True, max_length=100)),
                        ('started_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('after_message_id', models.BigIntegerField(blank=True, help_text='Cursor when the job started.', null=True)),
                        ('through_message_id', models.BigIntegerField(blank=True, help_text='Last message the job covered.', null=True)),
                        ('message_count', models.PositiveIntegerField(default=0)),
                        ('facts_added', models.PositiveIntegerField(default=0)),
                        ('facts_updated', models.PositiveIntegerField(default=0)),
                        ('facts_deleted', models.PositiveIntegerField(default=0)),
                        ('facts_unchanged', models.PositiveIntegerField(default=0)),
                        ('reflections_added', models.PositiveIntegerField(default=0)),
                        ('error', models.TextField(blank=True)),
                        ('input', models.JSONField(blank=True, default=dict, help_text='Kept when the job fails, for replay.')),
                        ('session', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='formation_jobs', to='conversations.session')),
                    ],
                    options={
                        'db_table': 'conversations_formationjob',
                        'indexes': [models.Index(fields=['session', '-started_at'], name='formationjob_session_recent')],
                    },
                ),
                migrations.CreateModel(
                    name='HeldMemory',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('kind', models.CharField(choices=[('fact', 'fact'), ('reflection', 'reflection')], max_length=10)),
                        ('content', models.TextField()),
                        ('reason', models.CharField(choices=[('agent_scope', 'agent-wide memory from an end user'), ('injection', 'reads as an instruction to the model'), ('protected', 'would change operator-curated memory')], max_length=12)),
                        ('detail', models.CharField(blank=True, help_text='Which rule or setting held it back.', max_length=300)),
                        ('origin', models.CharField(help_text='formation or assistant_tool.', max_length=20)),
                        ('status', models.CharField(choices=[('pending', 'pending review'), ('approved', 'approved agent-wide'), ('kept_for_user', "kept at the user's scope"), ('rejected', 'rejected')], default='pending', max_length=14)),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('decided_at', models.DateTimeField(blank=True, null=True)),
                        ('decided_by', models.CharField(blank=True, max_length=200)),
                        ('stored_id', models.BigIntegerField(blank=True, help_text='The fact or reflection written when an operator approved or kept it.', null=True)),
                        ('agent', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='held_memories', to='agents.agent')),
                        ('session', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='conversations.session')),
                        ('source_messages', models.ManyToManyField(blank=True, related_name='+', to='conversations.message')),
                        ('user', models.ForeignKey(blank=True, help_text='Who said it.', null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.enduser')),
                    ],
                    options={
                        'verbose_name': 'held memory',
                        'verbose_name_plural': 'held memories (review queue)',
                        'db_table': 'conversations_heldmemory',
                        'indexes': [models.Index(condition=models.Q(('status', 'pending')), fields=['agent', 'created_at'], name='heldmemory_pending_agent'), models.Index(fields=['agent', 'status', '-created_at'], name='heldmemory_agent_status')],
                    },
                ),
                migrations.CreateModel(
                    name='RetentionRun',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('started_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('facts_closed', models.PositiveIntegerField(default=0)),
                        ('message_embeddings_dropped', models.PositiveIntegerField(default=0)),
                        ('agent', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='retention_runs', to='agents.agent')),
                    ],
                    options={
                        'db_table': 'conversations_retentionrun',
                        'indexes': [models.Index(fields=['agent', '-started_at'], name='retentionrun_agent_recent')],
                    },
                ),
            ],
        ),
    ]
