"""import_memories on the sample file of every format (tests/fixtures/import/), against real PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from agents.models import Agent, EndUser
from conversations.models import Message, MessageEmbedding, Session
from core.embeddings.spaces import embedding_space_active
from core.llm.tokens import count_tokens
from facts.models import Entity, Fact, FactEmbedding, Relation
from portability.formats.locomo import read_locomo
from reflections.models import ConsolidatedMemory, Reflection
from tests.formation_support import wait_until

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "import"
LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "benchmarks" / "locomo" / "locomo10.json"


def _import(format: str, path: Path, agent: str = "imported", *options: str) -> str:
    out = StringIO()
    # Messages are embedded here so the checks see their vectors; queueing them is tested with a real worker.
    arguments = [str(path), "--format", format, "--agent", agent, "--embed-messages-here", *options]
    call_command("import_memories", *arguments, stdout=out, stderr=StringIO())
    return out.getvalue()


def _snapshot(agent: str) -> dict[str, int]:
    """Row counts of everything an import writes for the agent."""
    return {
        "users": EndUser.objects.filter(agent__external_id=agent).count(),
        "sessions": Session.objects.filter(agent__external_id=agent).count(),
        "messages": Message.objects.filter(session__agent__external_id=agent).count(),
        "message vectors": MessageEmbedding.objects.filter(agent__external_id=agent).count(),
        "facts": Fact.objects.filter(agent__external_id=agent).count(),
        "fact vectors": FactEmbedding.objects.filter(agent__external_id=agent).count(),
        "reflections": Reflection.objects.filter(agent__external_id=agent).count(),
        "blobs": ConsolidatedMemory.objects.filter(agent__external_id=agent).count(),
        "blob versions": sum(blob.version for blob in ConsolidatedMemory.objects.filter(agent__external_id=agent)),
    }


def _assert_second_run_adds_nothing(format: str, path: Path, agent: str = "imported", *options: str) -> str:
    before = _snapshot(agent)
    output = _import(format, path, agent, *options)
    assert _snapshot(agent) == before
    assert " added" not in output.replace("0 added", ""), output
    return output


def _fact(content: str) -> Fact:
    return Fact.objects.get(content=content)


@pytest.mark.django_db
def test_mongo_facts_map_users_and_provenance_and_skip_duplicates_and_other_documents():
    output = _import("mongo-facts", FIXTURES / "mongo_facts.jsonl")

    assert "facts: 4 added, 1 duplicate" in output
    assert "not imported: 1 documents of type 'message'" in output
    birthday = _fact("Gene's birthday is March 15th")
    assert (birthday.user.external_id, birthday.scopes) == ("gene", ["user"])
    assert birthday.valid_from == datetime(2024, 3, 1, 10, 0, tzinfo=UTC)
    assert birthday.metadata["import"] == {
        "format": "mongo-facts",
        "source": "mongo_facts.jsonl",
        "original_id": "65f1a0000000000000000001",
    }
    assert birthday.metadata["original_metadata"] == {"user_id": "gene", "source": "chat"}
    assert _fact("Gene works as a nurse in Lisbon").tags == ["work"]
    support = _fact("The support line opens at 9am on weekdays")
    assert (support.user, support.scopes) == (None, ["agent"])
    assert _fact("Maria prefers green tea over coffee").valid_from == datetime(2024, 3, 1, 10, 46, 40, tzinfo=UTC)
    space = embedding_space_active()
    assert FactEmbedding.objects.filter(space=space, fact__agent__external_id="imported").count() == 4
    assert FactEmbedding.objects.get(fact=support).restricted_to_user_id is None
    assert "facts: 1 duplicate, 4 existing" in _assert_second_run_adds_nothing(
        "mongo-facts", FIXTURES / "mongo_facts.jsonl"
    )


@pytest.mark.django_db
def test_mongo_collections_become_sessions_messages_blob_versions_and_user_facts():
    output = _import("mongo-collections", FIXTURES / "mongo_collections")

    session = Session.objects.get(external_id="sess-42")
    assert session.user.external_id == "gene"
    messages = list(session.messages.order_by("pk"))
    assert [(m.role, m.content[:12]) for m in messages] == [
        ("user", "Can you help"),
        ("assistant", "Of course! H"),
        ("user", "About twelve"),
        ("assistant", "Twelve guest"),
    ]
    assert [m.token_count for m in messages] == [count_tokens(m.content) for m in messages]
    assert session.message_count == 4 and session.token_count == sum(m.token_count for m in messages)
    assert session.started_at == datetime(2024, 3, 10, 18, 0, tzinfo=UTC)
    assert session.last_activity_at == datetime(2024, 3, 10, 18, 1, 30, tzinfo=UTC)
    assert session.formed_through_message_id == messages[-1].pk  # imported history counts as formed
    assert messages[0].idempotency_key == "import:mongo-collections:66000000000000000000000a"
    assert messages[0].metadata["import"]["original_id"] == "66000000000000000000000a"
    assert MessageEmbedding.objects.filter(session=session).count() == 4
    assert Session.objects.get(external_id="sess-43").messages.count() == 2
    assert "not imported: 1 vectors without session_id or user_id" in output
    blob = ConsolidatedMemory.objects.get(session=session)
    assert (blob.scope, blob.version) == ("session", 2)
    assert blob.summarized_through_message_id == messages[-1].pk
    assert blob.content.startswith("Gene is planning a birthday dinner for about twelve")
    assert list(blob.past_versions.values_list("content", flat=True)) == ["Gene is planning a birthday dinner."]
    language = _fact("preferred language: Portuguese")
    assert (language.user.external_id, language.metadata["key"]) == ("gene", "preferred_language")
    assert _fact("favorite tea: sencha").user.external_id == "maria"
    assert "not imported: 1 memories without user_id, key or value" in output
    _assert_second_run_adds_nothing("mongo-collections", FIXTURES / "mongo_collections")


@pytest.mark.django_db
def test_leave_unformed_keeps_the_formation_cursor_before_imported_messages():
    _import("mongo-collections", FIXTURES / "mongo_collections", "imported", "--leave-unformed")

    assert Session.objects.get(external_id="sess-42").formed_through_message_id is None


@pytest.mark.django_db
def test_sqlite_rows_become_the_given_users_facts_or_agent_facts_without_one():
    output = _import("sqlite", FIXTURES / "memory.sqlite", "with-user", "--user", "robin")

    assert "facts: 3 added, 1 duplicate, 1 invalid" in output
    lives = _fact("Robin lives in Utrecht")
    assert (lives.user.external_id, lives.scopes, lives.tags) == ("robin", ["user"], ["location", "home"])
    assert lives.valid_from == datetime(2023, 11, 1, 9, 5, tzinfo=UTC)
    assert lives.metadata["import"]["original_id"] == "2"

    _import("sqlite", FIXTURES / "memory.sqlite", "without-user")
    assert set(Fact.objects.filter(agent__external_id="without-user").values_list("user", flat=True)) == {None}
    _assert_second_run_adds_nothing("sqlite", FIXTURES / "memory.sqlite", "with-user", "--user", "robin")


@pytest.mark.django_db
def test_markdown_turns_facts_and_summary():
    _import("markdown", FIXTURES / "markdown")

    session = Session.objects.get(external_id="conv-001")
    assert session.user.external_id == "lee"
    messages = list(session.messages.order_by("pk"))
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[0].content == "I just adopted a rescue greyhound called Pixel."
    assert messages[1].metadata["front_matter"] == {"model": "old-model-1"}
    pixel = _fact("Lee has a rescue greyhound named Pixel")
    assert (pixel.user.external_id, pixel.tags, pixel.source_session) == ("lee", ["pets", "dogs"], session)
    assert pixel.metadata["import"]["original_id"] == "fact-pixel"
    assert _fact("Pixel is scared of the vacuum cleaner").metadata["import"]["original_id"] == "facts/vacuum"
    clinic = _fact("The partner vet clinic is open until 8pm on Thursdays")
    assert (clinic.user, clinic.scopes) == (None, ["agent"])
    blob = ConsolidatedMemory.objects.get(scope="user")
    assert blob.user.external_id == "lee" and blob.content.startswith("Lee recently adopted Pixel")
    _assert_second_run_adds_nothing("markdown", FIXTURES / "markdown")


@pytest.mark.django_db
def test_prev_gen_facts_reflections_and_blobs():
    output = _import("prev-gen", FIXTURES / "prev_gen.json")

    applying = _fact("Sam is applying for data analyst jobs")
    assert (applying.user.external_id, applying.source_session.external_id) == ("sam", "pg-session-1")
    assert _fact("Sam has an interview at Contoso on March 3rd").source_session.external_id == "pg-session-2"
    directive = Reflection.objects.get(content__startswith="Keep answers to Sam short")
    assert (directive.scope, directive.user.external_id, directive.session) == ("user", "sam", None)
    assert directive.source == Reflection.Source.IMPORT
    assert directive.created_at == datetime(2024, 2, 10, 14, 3, tzinfo=UTC)
    suggestion = Reflection.objects.get(content__startswith="Offer to review")
    assert (suggestion.scope, suggestion.session.external_id) == ("session", "pg-session-1")
    assert Reflection.objects.get(content__startswith="Sam asked for help").scope == "session"
    assert "not imported: 1 memory_sessions items of type 'mood'" in output
    user_blob = ConsolidatedMemory.objects.get(scope="user")
    assert user_blob.version == 2 and user_blob.content.startswith("Sam is looking for a data analyst job")
    assert list(user_blob.past_versions.values_list("content", flat=True)) == ["Sam is looking for a job."]
    agent_blob = ConsolidatedMemory.objects.get(scope="agent")
    assert agent_blob.content == (
        "The agent coaches job seekers on applications and interviews.\n\n"
        "Users appreciate concrete examples from real job postings."
    )
    _assert_second_run_adds_nothing("prev-gen", FIXTURES / "prev_gen.json")


@pytest.mark.django_db
def test_mem0_memories_keep_their_dates_categories_and_ids():
    output = _import("mem0", FIXTURES / "mem0.json")

    assert "facts: 3 added, 1 invalid" in output
    hiking = _fact("Likes hiking in the Alps")
    assert (hiking.user.external_id, hiking.tags) == ("alex", ["hobbies"])
    assert hiking.valid_from == datetime(2024, 6, 1, 17, 0, tzinfo=UTC)  # updated_at: mem0 overwrites in place
    assert hiking.metadata["mem0"]["run_id"] == "run-7"
    assert hiking.metadata["mem0"]["metadata"] == {"origin": "onboarding"}
    cite = _fact("Always cite sources when answering medical questions")
    assert (cite.user, cite.scopes, cite.metadata["mem0"]["agent_id"]) == (None, ["agent"], "helper-bot")
    _assert_second_run_adds_nothing("mem0", FIXTURES / "mem0.json")


@pytest.mark.django_db
def test_records_over_the_character_limits_are_reported_not_stored(settings):
    settings.FACT_MAX_CHARS = 20

    output = _import("mem0", FIXTURES / "mem0.json")

    assert "2 too long" in output and "1 added" in output
    assert list(Fact.objects.values_list("content", flat=True)) == ["Is vegetarian"]


@pytest.mark.django_db
def test_locomo_conversations_become_one_agent_each_with_turns_observations_and_summaries():
    output = _import("locomo", FIXTURES / "locomo_sample.json", "bench")

    assert set(Agent.objects.values_list("external_id", flat=True)) == {"bench-conv-t1", "bench-conv-t2"}
    assert "not imported: 3 question/answer items (evaluation data)" in output
    agent = Agent.objects.get(external_id="bench-conv-t1")
    assert set(agent.users.values_list("external_id", flat=True)) == {"Ana", "Ben"}
    assert list(agent.sessions.order_by("started_at").values_list("external_id", flat=True)) == [
        "conv-t1:session_1",
        "conv-t1:session_2",
    ]
    first = agent.sessions.get(external_id="conv-t1:session_1")
    assert first.user.external_id == "Ana" and first.started_at == datetime(2023, 6, 3, 14, 5, tzinfo=UTC)
    image = Message.objects.get(session=first, metadata__dia_id="D1:4")
    assert image.content.endswith("[shares a photo of a round loaf of bread on a wooden board]")
    assert image.metadata["speaker"] == "Ben" and image.metadata["img_url"] == ["https://example.invalid/loaf.jpg"]
    assert Message.objects.filter(session__agent=agent).count() == 7
    assert MessageEmbedding.objects.filter(agent=agent).count() == 7
    starter = Fact.objects.get(agent=agent, content__startswith="Ben named his sourdough starter")
    assert (starter.user.external_id, starter.scopes) == ("Ben", ["user", "agent"])
    assert starter.metadata["dia_ids"] == ["D2:3", "D1:4"]
    assert set(starter.source_messages.values_list("metadata__dia_id", flat=True)) == {"D2:3", "D1:4"}
    assert starter.source_session.external_id == "conv-t1:session_2"
    assert starter.valid_from == datetime(2023, 6, 17, 9, 40, tzinfo=UTC)
    assert FactEmbedding.objects.get(fact=starter).restricted_to_user_id is None  # both speakers may retrieve it
    assert Fact.objects.filter(agent=agent).count() == 5
    assert Fact.objects.filter(agent__external_id="bench-conv-t2").count() == 2
    assert ConsolidatedMemory.objects.filter(agent=agent, scope="session").count() == 2
    # An observation names its speaker: the speaker is the user it is imported for, so the name is theirs.
    for name in ("Ana", "Ben"):
        speaker = agent.users.get(external_id=name)
        self_entity = Entity.objects.get(user=speaker, is_user=True)
        assert name.lower() in self_entity.aliases
        assert not Entity.objects.filter(user=speaker, is_user=False, aliases__contains=[name.lower()]).exists()
        assert Relation.objects.filter(user=speaker, subject=self_entity).exists()
    _assert_second_run_adds_nothing("locomo", FIXTURES / "locomo_sample.json", "bench")


@pytest.mark.django_db
def test_dry_run_counts_what_a_real_run_adds_and_stores_nothing():
    dry = _import("prev-gen", FIXTURES / "prev_gen.json", "dry", "--dry-run")

    assert dry.startswith("dry run, nothing stored")
    assert not Agent.objects.filter(external_id="dry").exists()
    assert not Fact.objects.exists() and not Reflection.objects.exists()
    real = _import("prev-gen", FIXTURES / "prev_gen.json", "dry")
    counted = [line for line in dry.splitlines()[1:-1] if not line.startswith("  embedded")]
    assert counted == [line for line in real.splitlines()[1:-1] if not line.startswith("  embedded")]
    assert "reflections: 3 added" in dry


@pytest.mark.django_db
def test_unreadable_input_is_a_clear_error_that_stores_nothing(tmp_path):
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"type": "fact", "content": "ok"}\n{not json\n')

    with pytest.raises(CommandError, match="broken.jsonl, line 2: not JSON"):
        _import("mongo-facts", broken)
    with pytest.raises(CommandError, match="--user does not apply"):
        _import("locomo", FIXTURES / "locomo_sample.json", "bench", "--user", "someone")
    with pytest.raises(CommandError, match="not an export_memories file"):
        _import("native", FIXTURES / "mem0.json")
    assert not Fact.objects.exists()


@pytest.mark.skipif(not LOCOMO.is_file(), reason="the LoCoMo data file is not present")
def test_the_real_locomo_file_reads_completely():
    imports = read_locomo(path=LOCOMO, agent_external_id="locomo", user_external_id=None)

    assert len(imports) == 10
    assert sum(len(data.sessions) for data in imports) == 272
    assert sum(len(s.messages) for data in imports for s in data.sessions) == 5882
    assert sum(len(data.facts) for data in imports) == 2541
    assert all(fact.source_messages for data in imports for fact in data.facts)


@pytest.mark.django_db(transaction=True)
def test_by_default_the_workers_embed_imported_messages_as_at_ingestion(celery_worker_process):
    out = StringIO()
    call_command(
        "import_memories", str(FIXTURES / "locomo_sample.json"), "--format", "locomo", "--agent", "queued", stdout=out
    )

    assert "queued for the workers: 10 message embeddings" in out.getvalue()
    assert FactEmbedding.objects.filter(agent__external_id__startswith="queued").count() == 7
    wait_until(
        lambda: MessageEmbedding.objects.filter(agent__external_id__startswith="queued").count() == 10,
        timeout=60,
        what="the worker to embed the imported messages",
        process=celery_worker_process,
    )
    again = StringIO()
    call_command(
        "import_memories", str(FIXTURES / "locomo_sample.json"), "--format", "locomo", "--agent", "queued", stdout=again
    )
    assert "queued for the workers" not in again.getvalue()
