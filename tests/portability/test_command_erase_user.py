import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from agents.models import EndUser, ErasureRecord
from conversations.models import Message, MessageEmbedding, Session
from conversations.services.message_embeddings import messages_embed_missing
from facts.models import Fact, FactEmbedding
from facts.services.facts import fact_create, fact_supersede
from portability.services.erasure import user_external_id_hash
from reflections.models import ConsolidatedMemory, ConsolidatedMemoryVersion, MemoryScope, Reflection
from reflections.services.context_cache import context_cache_key
from tests.factories import EndUserFactory, SessionFactory


def _memory_of(*, agent, user: EndUser, secret: str) -> Session:
    """A session with embedded messages, a user fact with two versions, an agent fact sourced from the user's
    messages, user and session reflections and blobs with a past version."""
    session = SessionFactory(user=user, external_id=f"{user.external_id}-s1")
    messages = Message.objects.bulk_create(
        [
            Message(session=session, role="user", content=f"My locker code is {secret}"),
            Message(session=session, role="assistant", content="Noted, I will remember it."),
        ]
    )
    messages_embed_missing(message_ids=[m.pk for m in messages])
    first = fact_create(agent=agent, user=user, scopes=["user"], content=f"The locker code is {secret}")
    fact_supersede(fact=first, content=f"The locker code is {secret}-2", reason="changed", source_messages=messages)
    fact_create(
        agent=agent,
        user=None,
        scopes=["agent"],
        content=f"Lockers on floor {secret} need codes",
        source_session=session,
        source_messages=messages[:1],
    )
    Reflection.objects.create(agent=agent, user=user, scope=MemoryScope.USER, content=f"Cares about {secret}")
    Reflection.objects.create(
        agent=agent, user=user, session=session, scope=MemoryScope.SESSION, content="Asked about lockers"
    )
    for scope, blob_session in ((MemoryScope.USER, None), (MemoryScope.SESSION, session)):
        blob = ConsolidatedMemory.objects.create(
            agent=agent,
            user=user,
            session=blob_session,
            scope=scope,
            content=f"{secret} blob",
            word_limit=400,
            version=2,
        )
        ConsolidatedMemoryVersion.objects.create(
            memory=blob, version=1, content=f"{secret} old blob", word_limit=400, created_at=timezone.now()
        )
    return session


@pytest.mark.django_db
def test_erase_user_leaves_only_the_audit_record_and_spares_other_users(agent, django_capture_on_commit_callbacks):
    erased = EndUserFactory(agent=agent, external_id="erase-me@example.com")
    kept = EndUserFactory(agent=agent)
    erased_session = _memory_of(agent=agent, user=erased, secret="4711")
    _memory_of(agent=agent, user=kept, secret="1234")
    cached_key_before = context_cache_key(agent_id=agent.pk, user_id=erased.pk, session_id=erased_session.pk)
    erased_message_ids = list(Message.objects.filter(session__user=erased).values_list("pk", flat=True))

    out = StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("erase_user", "--agent", agent.external_id, "--user", erased.external_id, "--yes", stdout=out)

    assert not EndUser.objects.filter(pk=erased.pk).exists()
    assert not Session.objects.filter(user_id=erased.pk).exists()
    assert not Message.objects.filter(pk__in=erased_message_ids).exists()
    assert not MessageEmbedding.objects.filter(message_id__in=erased_message_ids).exists()
    assert not MessageEmbedding.objects.filter(user_id=erased.pk).exists()
    assert not Fact.objects.filter(content__contains="4711-2").exists()
    assert not Fact.objects.filter(content="The locker code is 4711").exists()
    assert not FactEmbedding.objects.filter(restricted_to_user_id=erased.pk).exists()
    assert not Reflection.objects.filter(user_id=erased.pk).exists()
    assert not ConsolidatedMemory.objects.filter(user_id=erased.pk).exists()
    assert not ConsolidatedMemoryVersion.objects.filter(content__contains="4711").exists()
    # Agent knowledge stays, without its links to the erased conversation.
    agent_fact = Fact.objects.get(content="Lockers on floor 4711 need codes")
    assert agent_fact.source_session_id is None and not agent_fact.source_messages.exists()
    assert FactEmbedding.objects.filter(fact=agent_fact).count() == 1
    # The other user is untouched.
    assert Fact.objects.filter(user=kept).count() == 2
    assert Message.objects.filter(session__user=kept).count() == 2
    assert MessageEmbedding.objects.filter(user=kept).count() == 2
    assert Reflection.objects.filter(user=kept).count() == 2
    assert ConsolidatedMemoryVersion.objects.filter(memory__user=kept).count() == 2

    record = ErasureRecord.objects.get()
    assert record.agent == agent and record.agent_external_id == agent.external_id
    assert record.user_external_id_hash == user_external_id_hash(
        agent_external_id=agent.external_id, user_external_id="erase-me@example.com"
    )
    assert record.deleted_counts["facts.Fact"] == 2
    assert record.deleted_counts["facts.FactEmbedding"] == 2
    assert record.deleted_counts["conversations.Message"] == 2
    assert record.deleted_counts["conversations.MessageEmbedding"] == 2
    assert record.deleted_counts["reflections.Reflection"] == 2
    assert record.deleted_counts["reflections.ConsolidatedMemory"] == 2
    assert record.deleted_counts["reflections.ConsolidatedMemoryVersion"] == 2
    assert record.deleted_counts["conversations.Session"] == 1
    assert record.deleted_counts["agents.EndUser"] == 1
    stored = json.dumps([record.agent_external_id, record.deleted_counts, record.requested_by])
    assert "4711" not in stored and "erase-me" not in stored
    assert record.requested_by.startswith("command:")
    assert context_cache_key(agent_id=agent.pk, user_id=erased.pk, session_id=erased_session.pk) != cached_key_before
    assert "erased; audit record" in out.getvalue()


@pytest.mark.django_db
def test_dry_run_counts_exactly_and_deletes_nothing(agent):
    user = EndUserFactory(agent=agent, external_id="dry")
    _memory_of(agent=agent, user=user, secret="99")

    out = StringIO()
    call_command("erase_user", "--agent", agent.external_id, "--user", "dry", "--dry-run", stdout=out)

    assert "would delete        2 facts.Fact" in out.getvalue()
    assert "would delete        1 agents.EndUser" in out.getvalue()
    assert EndUser.objects.filter(pk=user.pk).exists()
    assert Fact.objects.filter(user=user).count() == 2
    assert Message.objects.filter(session__user=user).count() == 2
    assert not ErasureRecord.objects.exists()


@pytest.mark.django_db
def test_unknown_user_is_an_error_that_changes_nothing(agent, end_user):
    with pytest.raises(CommandError, match="has no user 'nobody'"):
        call_command("erase_user", "--agent", agent.external_id, "--user", "nobody", "--yes")
    assert EndUser.objects.filter(pk=end_user.pk).exists()
    assert not ErasureRecord.objects.exists()
