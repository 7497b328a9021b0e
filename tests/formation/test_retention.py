import datetime

import pytest
from django.utils import timezone

from conversations.models import Message, MessageEmbedding
from conversations.services.ingestion import MessageInput, session_append_messages
from conversations.services.message_embeddings import messages_embed_missing
from facts.models import Fact
from facts.services.facts import fact_create
from formation.models import RetentionRun
from formation.services.retention import retention_enforce, retention_enforce_all
from tests.factories import EndUserFactory


def _facts(agent, user, contents):
    return [fact_create(agent=agent, user=user, scopes=["user"], content=content) for content in contents]


@pytest.mark.django_db
def test_retention_is_off_unless_an_agent_sets_a_cap(agent, end_user):
    _facts(agent, end_user, [f"The user owns {n} guitars in total." for n in range(4)])

    assert retention_enforce(agent=agent) is None
    assert retention_enforce_all()["agents"] == 0
    assert Fact.objects.filter(valid_to__isnull=True).count() == 4


@pytest.mark.django_db
def test_per_user_cap_closes_least_recently_accessed_then_oldest_never_pinned(agent, end_user):
    now = timezone.now()
    pinned, never_read, read_long_ago, read_recently = _facts(
        agent,
        end_user,
        [
            "The user is allergic to peanuts.",
            "The user once visited Oslo.",
            "The user likes jazz music.",
            "The user plays chess on Sundays.",
        ],
    )
    Fact.objects.filter(pk=pinned.pk).update(pinned=True)
    Fact.objects.filter(pk=read_long_ago.pk).update(last_accessed_at=now - datetime.timedelta(days=30))
    Fact.objects.filter(pk=read_recently.pk).update(last_accessed_at=now)
    other = EndUserFactory(agent=agent, external_id="other")
    _facts(agent, other, ["The other user has one cat."])
    agent.max_current_facts_per_user = 2
    agent.save()

    run = retention_enforce(agent=agent)

    current = set(Fact.objects.filter(user=end_user, valid_to__isnull=True).values_list("pk", flat=True))
    assert current == {pinned.pk, read_recently.pk}
    evicted = Fact.objects.get(pk=never_read.pk)
    assert evicted.valid_to is not None and evicted.closed_reason.startswith("retention:")
    assert Fact.objects.filter(user=other, valid_to__isnull=True).count() == 1
    assert (run.facts_closed, RetentionRun.objects.count()) == (2, 1)
    assert Fact.objects.count() == 5  # closed, not destroyed


@pytest.mark.django_db
def test_agent_wide_cap_and_message_vector_cap(agent, end_user):
    for content in ["Support opens at 9am.", "Returns take 30 days.", "Shipping is free over 50 euros."]:
        fact_create(agent=agent, user=None, scopes=["agent"], content=content)
    result = session_append_messages(
        agent=agent,
        user_external_id=end_user.external_id,
        session_external_id="s",
        messages=[MessageInput(role="user", content=f"message {n}") for n in range(5)],
    )
    messages_embed_missing(message_ids=[message.pk for message in result.messages])
    agent.max_current_facts_per_agent = 1
    agent.max_embedded_messages_per_session = 2
    agent.save()

    run = retention_enforce(agent=agent)

    assert list(Fact.objects.filter(user=None, valid_to__isnull=True).values_list("content", flat=True)) == [
        "Shipping is free over 50 euros."
    ]
    assert run.message_embeddings_dropped == 3
    kept = MessageEmbedding.objects.values_list("message__content", flat=True).order_by("message_id")
    assert list(kept) == ["message 3", "message 4"]
    assert result.session.messages.count() == 5


@pytest.mark.django_db
def test_the_sweep_requeues_messages_whose_embedding_task_was_lost(agent, end_user, monkeypatch):
    from conversations.services import message_embeddings
    from conversations.services.message_embeddings import messages_embedding_sweep

    result = session_append_messages(
        agent=agent,
        user_external_id=end_user.external_id,
        session_external_id="s",
        messages=[MessageInput(role="user", content=f"message {n}") for n in range(3)],
    )
    messages_embed_missing(message_ids=[result.messages[0].pk])
    queued: list[list[int]] = []
    monkeypatch.setattr(message_embeddings, "task_enqueue_safely", lambda task, ids: queued.append(ids))

    assert messages_embedding_sweep() == 0, "a message just stored still has its own task queued"
    Message.objects.update(stored_at=timezone.now() - datetime.timedelta(minutes=5))
    assert messages_embedding_sweep() == 2
    assert queued == [[message.pk for message in result.messages[1:]]]
