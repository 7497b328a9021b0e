import pytest

from agents.models import EndUser
from conversations.models import Session
from conversations.services.ingestion import MessageInput, session_append_messages
from core.models import LLMCall
from facts.models import Fact
from formation.models import FormationJob
from formation.services.formation import session_form_memories
from reflections.models import Reflection


@pytest.mark.django_db
def test_offline_formation_of_a_short_conversation(agent):
    result = session_append_messages(
        agent=agent,
        user_external_id="u1",
        session_external_id="s1",
        messages=[
            MessageInput(role="user", content="Hi! My name is Gene Parker and I live in Lisbon."),
            MessageInput(role="assistant", content="Nice to meet you, Gene."),
            MessageInput(role="user", content="I work as a nurse. I love hiking in the mountains."),
            MessageInput(role="user", content="What should I cook tonight? Please keep your answers short."),
        ],
    )
    outcome = session_form_memories(session_id=result.session.pk, trigger="explicit")

    facts = set(Fact.objects.values_list("content", flat=True))
    assert "The user's name is Gene Parker." in facts
    assert "The user lives in Lisbon." in facts
    assert outcome.job.status == "succeeded"
    assert list(Reflection.objects.values_list("scope", "content")) == [("user", "The user prefers short answers.")]
    assert LLMCall.objects.filter(purpose="extract_facts", outcome="ok").count() == 1
    result.session.refresh_from_db()
    assert result.session.formed_through_message_id == result.messages[-1].pk
    assert session_form_memories(session_id=result.session.pk, trigger="explicit").job.message_count == 0
    assert Fact.objects.count() == len(facts)


@pytest.mark.django_db
def test_the_claim_reads_the_session_agent_and_user_as_the_orm_does(agent, scripted_llm):
    from formation.services.formation import _claim

    result = session_append_messages(
        agent=agent,
        user_external_id="u-json",
        session_external_id="s-json",
        messages=[MessageInput(role="user", content="Hello there, I keep bees.")],
    )
    Session.objects.filter(pk=result.session.pk).update(metadata={"channel": "web"})
    EndUser.objects.filter(pk=result.session.user_id).update(metadata={"plan": "pro"})

    session, job = _claim(session_id=result.session.pk, trigger="explicit", task_id="t-1")

    assert session.metadata == {"channel": "web"} and session.user.metadata == {"plan": "pro"}
    assert session.agent == agent and session.formation_status == "running"
    assert FormationJob.objects.get(pk=job.pk).status == "running"
