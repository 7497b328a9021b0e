"""export_memories and its lossless read-back with import_memories --format native."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from agents.models import Agent
from conversations.models import Message, MessageEmbedding, Session
from conversations.services.message_embeddings import messages_embed_missing
from facts.models import Entity, Fact, FactEmbedding, Relation
from facts.services.facts import fact_close, fact_create, fact_supersede
from facts.services.graph import EntityMention, entity_merge
from reflections.models import Reflection
from reflections.services.consolidation import consolidated_memory_replace
from reflections.services.reflections import reflection_create
from tests.export_support import export_normalised, export_rows
from tests.factories import AgentFactory, EndUserFactory, MessageFactory, SessionFactory
from tests.graph_support import USER, relation_stated


@pytest.fixture
def source_agent(db) -> Agent:
    """Every kind of row: two users, sessions with messages (one with an idempotency key), a fact with three
    versions, a closed fact, an agent fact linked to its source messages, entities (one merged into another) and
    relations (one ended with the fact version that stated it, one with the merge), reflections (one absorbed) and
    blobs with past versions: seven fact versions, four messages, three entities, four relations."""
    agent = AgentFactory(external_id="source", name="Source", formation_msg_interval=12)
    gene = EndUserFactory(agent=agent, external_id="gene", metadata={"plan": "pro"})
    maria = EndUserFactory(agent=agent, external_id="maria")
    session = SessionFactory(user=gene, external_id="s-1", metadata={"channel": "web"})
    messages = Message.objects.bulk_create(
        [
            Message(session=session, role="user", content="My birthday is March 15th", token_count=6),
            Message(session=session, role="assistant", content="Noted!", token_count=2, idempotency_key="k-2"),
            Message(session=session, role="user", content="Actually it is March 16th", token_count=6),
        ]
    )
    messages_embed_missing(message_ids=[m.pk for m in messages])
    Session.objects.filter(pk=session.pk).update(formed_through_message_id=messages[1].pk, message_count=3)
    maria_session = SessionFactory(user=maria, external_id="s-2")
    MessageFactory(session=maria_session, content="I like green tea", token_count=4)

    birthday = fact_create(
        agent=agent, user=gene, scopes=["user"], content="Gene's birthday is March 15th", source_messages=messages[:1]
    )
    relation_stated(
        fact=birthday, subject=USER, predicate="born_on", value="March 15th", source_messages=messages[:1]
    )  # ended when the birthday is corrected
    corrected = fact_supersede(
        fact=birthday, content="Gene's birthday is March 16th", reason="corrected", source_messages=messages[2:]
    )
    latest = fact_supersede(
        fact=corrected, content="Gene's birthday is on March 16th", reason="reworded", tags=["dates"]
    )
    relation_stated(fact=latest, subject=USER, predicate="born_on", value="March 16th")
    home = fact_create(agent=agent, user=gene, scopes=["user"], content="Gene lives in Lisbon (Lisboa)")
    lisbon, lisboa = (
        relation_stated(
            fact=home, subject=USER, predicate="lives_in", object=EntityMention(name, "place")
        ).object_entity
        for name in ("Lisbon", "Lisboa")
    )
    entity_merge(kept=lisbon, merged=lisboa)  # its relation ends, a twin of Lisbon's
    closed = fact_create(agent=agent, user=maria, scopes=["user"], content="Maria drinks coffee")
    fact_close(fact=closed, reason="contradicted")
    fact_create(agent=agent, user=maria, scopes=["user"], content="Maria likes green tea", metadata={"k": [1, 2]})
    fact_create(
        agent=agent,
        user=None,
        scopes=["agent"],
        content="Users share birthdays",
        source_session=session,
        source_messages=messages,
    )

    absorbed = reflection_create(agent=agent, scope="user", user=gene, content="Gene cares about dates")
    consolidated_memory_replace(
        agent=agent, scope="user", user=gene, session=None, content="Gene: precise.", reason="first"
    )
    consolidated_memory_replace(
        agent=agent,
        scope="user",
        user=gene,
        session=None,
        content="Gene: precise about dates.",
        reason="second",
        absorbed=[absorbed],
    )
    reflection_create(agent=agent, scope="session", user=gene, session=session, content="Talked about birthdays")
    reflection_create(agent=agent, scope="agent", content="Users mention birthdays often")
    consolidated_memory_replace(
        agent=agent, scope="agent", user=None, session=None, content="Agent notes.", reason="init"
    )
    return agent


def _import_native(path: Path, agent: str) -> str:
    out = StringIO()
    call_command(
        "import_memories",
        str(path),
        "--format",
        "native",
        "--agent",
        agent,
        "--embed-messages-here",
        stdout=out,
        stderr=StringIO(),
    )
    return out.getvalue()


@pytest.mark.django_db
def test_export_then_native_import_is_lossless_and_idempotent(source_agent, tmp_path):
    exported = export_rows("source", tmp_path / "source.jsonl")
    kinds = [row["kind"] for row in exported]
    assert kinds[0] == "export"
    assert kinds.count("fact") == 7 and kinds.count("blob_version") == 1 and kinds.count("message") == 4
    assert kinds.count("entity") == 3 and kinds.count("relation") == 4

    output = _import_native(tmp_path / "source.jsonl", "copy")

    assert "facts: 7 added" in output and "messages: 4 added" in output
    copy = Agent.objects.get(external_id="copy")
    assert (copy.name, copy.formation_msg_interval) == ("Source", 12)
    reexported = export_rows("copy", tmp_path / "copy.jsonl")
    assert export_normalised(reexported) == export_normalised(exported)
    # Search works on the copy: every fact version and message has a vector in the active space.
    assert FactEmbedding.objects.filter(agent=copy).count() == 7
    assert MessageEmbedding.objects.filter(agent=copy).count() == 4
    current = Fact.objects.get(agent=copy, valid_to__isnull=True, content__contains="on March 16th")
    # The source agent still uses the exported lineages, so the copy's facts got lineages of their own.
    assert current.version == 3 and current.lineage != Fact.objects.get(agent=source_agent, version=3).lineage
    assert Reflection.objects.get(agent=copy, absorbed=True).consolidated_into.version == 2
    ended = Relation.objects.get(agent=copy, object_value="March 15th")
    assert ended.valid_to is not None and ended.source_facts.get().version == 1
    assert Entity.objects.get(agent=copy, name="Lisboa").merged_into == Entity.objects.get(agent=copy, name="Lisbon")

    before = export_normalised(export_rows("copy", tmp_path / "before.jsonl"))
    again = _import_native(tmp_path / "source.jsonl", "copy")
    assert " added" not in again.replace("0 added", ""), again
    assert export_normalised(export_rows("copy", tmp_path / "after.jsonl")) == before


@pytest.mark.django_db
def test_erase_then_reimport_restores_the_user(source_agent, tmp_path):
    exported = export_normalised(export_rows("source", tmp_path / "gene.jsonl", "--user", "gene"))
    call_command("erase_user", "--agent", "source", "--user", "gene", "--yes", stdout=StringIO())
    assert not Fact.objects.filter(user__external_id="gene").exists()
    assert not Entity.objects.filter(agent=source_agent).exists() and not Relation.objects.exists()

    _import_native(tmp_path / "gene.jsonl", "source")

    assert export_normalised(export_rows("source", tmp_path / "again.jsonl", "--user", "gene")) == exported


@pytest.mark.django_db
def test_user_export_holds_only_that_users_rows(source_agent, tmp_path):
    rows = export_rows("source", tmp_path / "maria.jsonl", "--user", "maria")

    assert rows[0]["user"] == "maria"
    assert [row["fields"]["external_id"] for row in rows if row["kind"] == "user"] == ["maria"]
    assert {row["fields"]["content"] for row in rows if row["kind"] == "fact"} == {
        "Maria drinks coffee",
        "Maria likes green tea",
    }
    assert not [row for row in rows if row["kind"] in ("blob", "blob_version", "reflection")]
    assert [row["fields"]["content"] for row in rows if row["kind"] == "message"] == ["I like green tea"]


@pytest.mark.django_db
def test_export_to_standard_output_and_unknown_agent(source_agent):
    out = StringIO()
    call_command("export_memories", "--agent", "source", stdout=out, stderr=StringIO())
    assert json.loads(out.getvalue().splitlines()[0])["format"] == "agent-memory-native"

    with pytest.raises(CommandError, match="no agent 'nobody'"):
        call_command("export_memories", "--agent", "nobody")


@pytest.mark.django_db
def test_messages_imported_into_an_existing_session_count_in_its_counters(tmp_path):
    """The interval trigger reads the session's counters: messages an import adds must be counted there."""
    from conversations.services.ingestion import MessageInput, session_append_messages

    turns = [
        MessageInput(role="user", content=f"Turn {n} about the garden.", idempotency_key=f"t-{n}") for n in range(5)
    ]
    source = AgentFactory(external_id="source")
    session_append_messages(agent=source, user_external_id="gene", session_external_id="s-1", messages=turns)
    export_rows("source", tmp_path / "source.jsonl")
    target = AgentFactory(external_id="target")
    session_append_messages(agent=target, user_external_id="gene", session_external_id="s-1", messages=turns[:2])

    _import_native(tmp_path / "source.jsonl", "target")

    session = Session.objects.get(agent=target, external_id="s-1")
    stored = Message.objects.filter(session=session)
    assert stored.count() == 5
    assert session.message_count == 5
    assert session.token_count == sum(message.token_count for message in stored)
