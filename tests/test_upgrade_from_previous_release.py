"""Upgrading from the release before issue 22 (the tenant moved to agents/, the formation pipeline to formation/):
a database built by that release's migrations and holding rows in every moved table migrates forward with every
row, column, index, constraint, trigger and trigger function exactly as it was (the moves only change Django's
state); content types, and so permissions and admin history, follow the models; and a native export written by that
release imports into this one without loss (the fields added since come back at their defaults)."""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from agents.models import Agent, AgentAPIKey, EndUser, ErasureRecord
from conversations.models import Message, Session
from core.models import LLMCall, SensitiveDataFinding
from facts.models import Fact
from facts.world_time import WORLD_TIME_FIELDS
from formation.models import FormationJob, HeldMemory, RetentionRun
from reflections.models import Reflection
from tests.export_support import export_normalised, export_rows

# The columns of memory categories, which the previous release did not have.
CATEGORY_FIELDS = ("category", "category_value")

# The newest migration of each app in the previous release; agents/ and formation/ did not exist.
PREVIOUS_RELEASE = [
    ("core", "0007_llmcall_rule_violations"),
    ("conversations", "0009_messageembedding_refers_to"),
    ("facts", "0006_fact_refers_to"),
    ("reflections", "0004_blob_curated_content"),
]
# The migrations that make the moves. The schema is compared after them: later migrations add tables of their own
# (facts 0008, the entity graph), which the moves must not be confused with.
MOVES = [
    ("agents", "0001_initial"),
    ("formation", "0001_initial"),
    ("conversations", "0011_formation_moves_to_formation"),
    ("core", "0008_agent_records_move_to_agents"),
    ("facts", "0007_tenant_moves_to_agents"),
    ("reflections", "0005_tenant_moves_to_agents"),
]
MOVED = {
    ("conversations", "agent"): "agents",
    ("conversations", "agentapikey"): "agents",
    ("conversations", "enduser"): "agents",
    ("core", "erasurerecord"): "agents",
    ("conversations", "formationjob"): "formation",
    ("conversations", "heldmemory"): "formation",
    ("conversations", "retentionrun"): "formation",
}
# Migrations run DDL and leave the database as they found it only when they run to the end: no test transaction.
pytestmark = pytest.mark.django_db(transaction=True)

PREVIOUS_EXPORT = Path(__file__).parent / "fixtures" / "previous_release" / "native_export.jsonl"


def _migrate(targets) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


def _previous_release_migrated():
    """The schema of the previous release (this release's migrations unapplied), and its models."""
    _migrate([*PREVIOUS_RELEASE, ("agents", None), ("formation", None)])
    graph = MigrationExecutor(connection).loader.graph
    ours = {app for app, _ in PREVIOUS_RELEASE} | {"agents", "formation"}
    nodes = [*PREVIOUS_RELEASE, *(node for node in graph.leaf_nodes() if node[0] not in ours)]
    return MigrationExecutor(connection).loader.project_state(nodes).apps


def _populate(old) -> dict:
    """Rows in every table that changed owner or whose foreign keys now point at a moved model, written through the
    previous release's models; and content types, a permission and an admin log entry for the moved models."""
    now = timezone.now()
    agent = old.get_model("conversations", "Agent").objects.create(
        external_id="acme", name="Acme", llm_daily_token_budget=5000, agent_memory_from_users="user_scope"
    )
    old.get_model("conversations", "AgentAPIKey").objects.create(
        agent=agent, name="ci", prefix="mk_abc", key_digest=hashlib.sha256(b"secret").hexdigest()
    )
    user = old.get_model("conversations", "EndUser").objects.create(agent=agent, external_id="gene", metadata={"a": 1})
    session = old.get_model("conversations", "Session").objects.create(agent=agent, user=user, external_id="s-1")
    message = old.get_model("conversations", "Message").objects.create(
        session=session, role="user", content="I moved to Lisbon last May.", token_count=7, idempotency_key="k1"
    )
    old.get_model("conversations", "FormationJob").objects.create(
        session=session, trigger="cold", status="failed", error="ProviderError: 502", input={"messages": [1]}
    )
    held = old.get_model("conversations", "HeldMemory").objects.create(
        agent=agent, user=user, session=session, kind="fact", content="Everyone lives in Lisbon.", reason="agent_scope"
    )
    held.source_messages.add(message)
    old.get_model("conversations", "RetentionRun").objects.create(agent=agent, facts_closed=2, finished_at=now)
    old.get_model("core", "ErasureRecord").objects.create(
        agent=agent, agent_external_id="acme", user_external_id_hash="0" * 64, deleted_counts={"x": 1}, requested_by="t"
    )
    old.get_model("core", "LLMCall").objects.create(agent=agent, purpose="facts", provider="offline", outcome="ok")
    old.get_model("core", "SensitiveDataFinding").objects.create(
        agent=agent, kind="password", action="withheld", target="fact"
    )
    old.get_model("facts", "Fact").objects.create(
        agent=agent,
        user=user,
        scopes=["user"],
        content="Gene lives in Lisbon.",
        content_hash="h",
        lineage=uuid.uuid4(),
        formed_at=now,
        valid_from=now - timedelta(days=1),
    )
    old.get_model("reflections", "Reflection").objects.create(
        agent=agent, user=user, scope="user", content="Prefers short answers."
    )
    old.get_model("reflections", "ConsolidationJob").objects.create(agent=agent, user=user, scope="user")

    # Content types as the previous release had them (going back renamed this release's to the old apps' labels).
    content_type = old.get_model("contenttypes", "ContentType")
    assert not content_type.objects.filter(app_label__in=["agents", "formation"]).exists()
    types = {key: content_type.objects.get_or_create(app_label=key[0], model=key[1])[0].pk for key in MOVED}
    permission, _ = old.get_model("auth", "Permission").objects.get_or_create(
        codename="view_agent", content_type_id=types[("conversations", "agent")], defaults={"name": "Can view agent"}
    )
    return {
        "agent": agent.pk,
        "user": user.pk,
        "held": held.pk,
        "message": message.pk,
        "types": types,
        "permission": permission.pk,
    }


def _schema_and_rows() -> dict:
    """Everything the upgrade must leave alone: each table's rows, columns, indexes, constraints, triggers and the
    trigger functions, read from PostgreSQL's catalogs."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
            "AND tablename NOT IN ('django_migrations', 'django_content_type') ORDER BY 1"
        )
        tables = [name for (name,) in cursor.fetchall()]
        rows = {}
        for table in tables:
            cursor.execute(f'SELECT * FROM "{table}" ORDER BY 1')
            rows[table] = [tuple(map(str, row)) for row in cursor.fetchall()]
        catalog = {
            "columns": "SELECT table_name, column_name, data_type, is_nullable, column_default, is_generated, "
            "generation_expression FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1, 2",
            "indexes": "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' "
            "ORDER BY 1, 2",
            "constraints": "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2",
            "triggers": "SELECT tgrelid::regclass::text, tgname, pg_get_triggerdef(oid), tgenabled FROM pg_trigger "
            "WHERE NOT tgisinternal ORDER BY 1, 2",
            "functions": "SELECT proname, prosrc FROM pg_proc WHERE pronamespace = 'public'::regnamespace "
            "AND prolang = (SELECT oid FROM pg_language WHERE lanname = 'plpgsql') ORDER BY 1",
        }
        schema = {}
        for part, sql in catalog.items():
            cursor.execute(sql)
            schema[part] = cursor.fetchall()
    return {"rows": rows, **schema}


@pytest.fixture
def previous_release_database():
    """The test database taken back to the previous release, populated; brought forward again afterwards whatever
    happens, with content types rebuilt, so the tests after this one find this release's schema."""
    try:
        yield _populate(_previous_release_migrated())
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
        ContentType.objects.clear_cache()


def test_the_upgrade_keeps_every_row_index_constraint_and_trigger(previous_release_database):
    before = _schema_and_rows()
    assert len(before["triggers"]) >= 4  # the search triggers of facts and messages are part of what is compared
    for table in ("conversations_agent", "conversations_heldmemory_source_messages", "core_erasurerecord"):
        assert before["rows"][table], table

    _migrate(MOVES)
    after = _schema_and_rows()

    for part in ("columns", "indexes", "constraints", "triggers", "functions"):
        assert after[part] == before[part], part
    assert after["rows"].keys() == before["rows"].keys()
    for table, rows in before["rows"].items():
        assert after["rows"][table] == rows, table


def test_after_the_upgrade_the_moved_models_read_the_same_rows(previous_release_database):
    ids = previous_release_database
    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())

    agent = Agent.objects.get(pk=ids["agent"])
    assert (agent.external_id, agent.llm_daily_token_budget, agent.agent_memory_from_users) == (
        "acme",
        5000,
        "user_scope",
    )
    assert AgentAPIKey.objects.get(agent=agent).prefix == "mk_abc"
    user = EndUser.objects.get(pk=ids["user"], agent=agent)
    assert user.metadata == {"a": 1}
    held = HeldMemory.objects.get(pk=ids["held"])
    assert (held.agent, held.user, held.session.external_id) == (agent, user, "s-1")
    assert list(held.source_messages.values_list("pk", flat=True)) == [ids["message"]]
    assert FormationJob.objects.get(session__agent=agent).input == {"messages": [1]}
    assert RetentionRun.objects.get(agent=agent).facts_closed == 2
    assert ErasureRecord.objects.get(agent=agent).deleted_counts == {"x": 1}
    assert LLMCall.objects.get(agent=agent).purpose == "facts"
    assert SensitiveDataFinding.objects.get(agent=agent).kind == "password"
    assert Fact.objects.get(agent=agent, user=user).content == "Gene lives in Lisbon."
    assert Reflection.objects.get(agent=agent).content == "Prefers short answers."
    assert Session.objects.get(agent=agent).user == user and Message.objects.get(session__agent=agent).idempotency_key
    # Deleting the tenant still cascades through the kept foreign keys of every app.
    agent.delete()
    assert not HeldMemory.objects.exists() and not Fact.objects.exists() and not LLMCall.objects.exists()
    assert ErasureRecord.objects.get().agent is None  # SET NULL, as before


def test_content_types_permissions_and_admin_history_follow_the_models(previous_release_database, admin_user):
    ids = previous_release_database
    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    ContentType.objects.clear_cache()

    for (old_app, model), new_app in MOVED.items():
        moved = ContentType.objects.get(pk=ids["types"][(old_app, model)])
        assert (moved.app_label, moved.model) == (new_app, model)
        assert not ContentType.objects.filter(app_label=old_app, model=model).exists()
    agent_type = ContentType.objects.get_for_model(Agent)
    assert agent_type.pk == ids["types"][("conversations", "agent")]
    assert agent_type.permission_set.filter(pk=ids["permission"]).exists()
    entry = LogEntry.objects.create(
        user=admin_user, content_type=agent_type, object_id=str(ids["agent"]), object_repr="Acme", action_flag=2
    )
    assert entry.get_edited_object() == Agent.objects.get(pk=ids["agent"])


def test_going_back_to_the_previous_release_leaves_the_schema_as_it_was(previous_release_database):
    before = _schema_and_rows()
    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())

    _previous_release_migrated()

    after = _schema_and_rows()
    assert {part: after[part] for part in after if part != "rows"} == {
        part: before[part] for part in before if part != "rows"
    }
    assert after["rows"]["conversations_agent"] == before["rows"]["conversations_agent"]


def test_the_previous_release_s_native_export_imports_without_loss(tmp_path):
    """tests/fixtures/previous_release/native_export.jsonl was written by the previous release's export_memories
    (the agent of tests/portability/test_command_export_memories.py: users, sessions, messages, fact versions, blobs
    with past versions, reflections)."""
    exported = [json.loads(line) for line in PREVIOUS_EXPORT.read_text().splitlines()]

    out = StringIO()
    call_command(
        "import_memories",
        str(PREVIOUS_EXPORT),
        "--format",
        "native",
        "--agent",
        "restored",
        "--embed-messages-here",
        stdout=out,
        stderr=StringIO(),
    )

    assert "facts: 6 added" in out.getvalue() and "messages: 4 added" in out.getvalue()
    restored = export_rows("restored", tmp_path / "restored.jsonl")
    # World time was not kept then: a fact gets what the upgrade gives a stored one (a day its text names, if any).
    for row in restored[1:]:
        if row["kind"] == "fact":
            refers_to = row["fields"]["refers_to"]
            assert (row["fields"]["held_from"], row["fields"]["held_from_precision"]) == (
                (refers_to, "day") if refers_to else (None, "")
            )
            assert (row["fields"]["held_until"], row["fields"]["held_until_precision"]) == (None, "")
    # Nor were categories: every fact is filed by the offline lexicons as it is imported, its relations with it.
    for row in restored[1:]:
        if row["kind"] == "fact":
            assert row["fields"]["category"], row
    without_world_time = [
        row
        if i == 0
        else {
            **row,
            "fields": {k: v for k, v in row["fields"].items() if k not in {*WORLD_TIME_FIELDS, *CATEGORY_FIELDS}},
        }
        for i, row in enumerate(restored)
    ]
    # The other fields this release added (a fact's expires_at) come back at their default: the previous release had
    # none.
    known = {row["kind"]: set(row["fields"]) for row in exported[1:]}
    for row in without_world_time[1:]:
        added = set(row["fields"]) - known.get(row["kind"], set(row["fields"]))
        assert {name: row["fields"].pop(name) for name in added} == dict.fromkeys(added), row
    # So do the agent settings added since (its memory categories).
    settings = without_world_time[0]["agent"]["settings"]
    added = set(settings) - set(exported[0]["agent"]["settings"])
    assert {name: settings.pop(name) for name in added} == {
        name: Agent._meta.get_field(name).get_default() for name in added
    }
    assert export_normalised(without_world_time) == export_normalised(exported)


def test_the_upgrade_gives_stored_facts_and_relations_the_world_time_their_text_names(previous_release_database):
    """facts 0010_world_time: a fact whose text names a day (refers_to) held from that day, a relation from the
    earliest such day of its facts; the rest stays unknown, never guessed."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO facts_fact (agent_id, user_id, scopes, content, content_hash, lineage, version, formed_at, "
            "valid_from, refers_to, change_reason, closed_reason, tags, metadata, access_count, key, pinned, "
            "written_by) SELECT %s, %s, ARRAY['user'], 'Gene moved to Lisbon on 3 May 2025.', 'h2', %s, 1, now(), "
            "now(), '2025-05-03', '', '', '{}', '{}', 0, '', false, 'formation' RETURNING id",
            [previous_release_database["agent"], previous_release_database["user"], str(uuid.uuid4())],
        )
    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())

    dated = Fact.objects.get(content="Gene moved to Lisbon on 3 May 2025.")
    undated = Fact.objects.get(content="Gene lives in Lisbon.")
    assert (dated.held_from.isoformat(), dated.held_from_precision) == ("2025-05-03", "day")
    assert (undated.held_from, undated.held_from_precision, undated.held_until_precision) == (None, "", "")
