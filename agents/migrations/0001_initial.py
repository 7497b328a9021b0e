"""The tenant moves here from conversations/ (Agent, AgentAPIKey, EndUser) and core/ (ErasureRecord) with its rows: the
tables keep their names (db_table), so this only tells Django's state that agents/ owns them (issue 22)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('conversations', '0009_messageembedding_refers_to'),
        ('core', '0007_llmcall_rule_violations'),
    ]

    operations = [
        # The tables stay where they are: only Django's record of which app owns them changes.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Agent',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('external_id', models.CharField(max_length=200, unique=True)),
                        ('name', models.CharField(blank=True, max_length=200)),
                        ('rag_enabled', models.BooleanField(default=True, help_text='Agents may search facts (API, tools, chat proxy).')),
                        ('always_in_context_enabled', models.BooleanField(default=True, help_text='Agents receive the always-in-context block (blobs plus recent reflections).')),
                        ('formation_msg_interval', models.PositiveIntegerField(blank=True, null=True)),
                        ('formation_token_interval', models.PositiveIntegerField(blank=True, null=True)),
                        ('cold_after_minutes', models.PositiveIntegerField(blank=True, null=True)),
                        ('min_messages_for_formation', models.PositiveIntegerField(blank=True, null=True)),
                        ('consolidation_threshold_agent', models.PositiveIntegerField(blank=True, null=True)),
                        ('consolidation_threshold_user', models.PositiveIntegerField(blank=True, null=True)),
                        ('consolidation_threshold_session', models.PositiveIntegerField(blank=True, null=True)),
                        ('blob_word_limit_agent', models.PositiveIntegerField(blank=True, null=True)),
                        ('blob_word_limit_user', models.PositiveIntegerField(blank=True, null=True)),
                        ('blob_word_limit_session', models.PositiveIntegerField(blank=True, null=True)),
                        ('profile_in_context', models.BooleanField(default=True, help_text="The always-in-context block includes the user's profile (facts with a key).")),
                        ('max_current_facts_per_user', models.PositiveIntegerField(blank=True, null=True)),
                        ('max_current_facts_per_agent', models.PositiveIntegerField(blank=True, help_text='Cap on current agent-wide facts (visible to every user).', null=True)),
                        ('max_embedded_messages_per_session', models.PositiveIntegerField(blank=True, null=True)),
                        ('sensitive_data', models.CharField(choices=[('withhold', 'withhold: store nothing that holds a secret'), ('redact', 'redact: store it with the secret replaced by [redacted …]')], default='withhold', help_text='What memory formation and the save tool do with a statement holding a password, key, card or account number, government id or one-time code (docs/security.md).', max_length=10)),
                        ('agent_memory_from_users', models.CharField(choices=[('review', "review: held for an operator's decision, not served until approved"), ('user_scope', 'never: kept at the scope of the user who said it'), ('open', 'freely: stored agent-wide (single-user agents only)')], default='review', help_text="What formation and the assistant's memory tools do with agent-wide memory drawn from an end user's conversation: every other user of the agent would see it (docs/security.md).", max_length=10)),
                        ('llm_daily_token_budget', models.PositiveBigIntegerField(blank=True, help_text="Tokens per UTC day that formation and consolidation may spend for this agent; over it, formation waits (nothing is lost) until the day ends or the budget is raised. Empty: the deployment's default; 0: none.", null=True, verbose_name='LLM daily token budget')),
                    ],
                    options={
                        'db_table': 'conversations_agent',
                    },
                ),
                migrations.CreateModel(
                    name='AgentAPIKey',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(blank=True, max_length=100)),
                        ('prefix', models.CharField(db_index=True, help_text='First characters, to recognise a key.', max_length=16)),
                        ('key_digest', models.CharField(max_length=64, unique=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('last_used_at', models.DateTimeField(blank=True, null=True)),
                        ('revoked_at', models.DateTimeField(blank=True, null=True)),
                        ('agent', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='api_keys', to='agents.agent')),
                    ],
                    options={
                        'verbose_name': 'API key',
                        'db_table': 'conversations_agentapikey',
                    },
                ),
                migrations.CreateModel(
                    name='EndUser',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('external_id', models.CharField(max_length=200)),
                        ('metadata', models.JSONField(blank=True, default=dict)),
                        ('agent', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='users', to='agents.agent')),
                    ],
                    options={
                        'verbose_name': 'end user',
                        'db_table': 'conversations_enduser',
                        'constraints': [models.UniqueConstraint(fields=('agent', 'external_id'), name='enduser_unique_per_agent')],
                    },
                ),
                migrations.CreateModel(
                    name='ErasureRecord',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('agent_external_id', models.CharField(max_length=200)),
                        ('user_external_id_hash', models.CharField(db_index=True, max_length=64)),
                        ('deleted_counts', models.JSONField(default=dict, help_text='Rows deleted, per kind.')),
                        ('requested_by', models.CharField(help_text='Who asked: an admin user, an API key, a command.', max_length=200)),
                        ('erased_at', models.DateTimeField(auto_now_add=True)),
                        ('agent', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='agents.agent')),
                    ],
                    options={
                        'db_table': 'core_erasurerecord',
                        'indexes': [models.Index(fields=['agent_external_id', '-erased_at'], name='erasure_agent_recent')],
                    },
                ),
            ],
        ),
    ]
