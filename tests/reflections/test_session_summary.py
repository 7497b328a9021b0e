"""The session summary (its blob) refreshes on a message cadence, and falls back to rules when the LLM fails."""

import pytest

from conversations.models import Session
from conversations.services.ingestion import MessageInput, session_append_messages
from core.exceptions import ProviderError
from core.llm.client import MalformedLLMOutput
from core.models import LLMCall
from formation.services.formation import session_form_memories
from reflections.models import ConsolidatedMemory, ConsolidationJob, Reflection
from reflections.services.consolidation import ScopeKey, scope_consolidate
from reflections.services.session_summary import session_summary_due


def _talk(agent, pairs: int, *, start: int = 0) -> Session:
    messages = []
    for i in range(start, start + pairs):
        messages += [
            MessageInput(role="user", content=f"Can we plan day {i} of the Lisbon trip?"),
            MessageInput(role="assistant", content=f"Day {i}: visit Belém in the morning. Then lunch."),
        ]
    return session_append_messages(
        agent=agent, user_external_id="u", session_external_id="trip", messages=messages
    ).session


def _session_key(session: Session) -> ScopeKey:
    return ScopeKey(agent_id=session.agent_id, scope="session", user_id=session.user_id, session_id=session.pk)


@pytest.mark.django_db
def test_summary_is_due_every_n_pairs_even_without_reflections(agent, settings, scripted_llm):
    settings.SESSION_SUMMARY_EVERY_N_PAIRS = 3
    session = _talk(agent, 2)
    session_form_memories(session_id=session.pk, trigger="explicit")
    session.refresh_from_db()
    assert not session_summary_due(session=session)

    session = _talk(agent, 1, start=2)
    session_form_memories(session_id=session.pk, trigger="explicit")
    session.refresh_from_db()
    assert session_summary_due(session=session)
    assert not Reflection.objects.exists()

    scripted_llm.script("consolidate", {"content": "- Planning a Lisbon trip, days 0-2."})
    job = scope_consolidate(key=_session_key(session))

    memory = ConsolidatedMemory.objects.get(session=session)
    assert job.status == "succeeded" and memory.content == "- Planning a Lisbon trip, days 0-2."
    assert memory.summarized_through_message_id == session.formed_through_message_id
    assert not memory.is_rule_based
    assert "Can we plan day 2 of the Lisbon trip?" in scripted_llm.calls("consolidate")[0].messages[-1]["content"]
    assert not session_summary_due(session=session)


@pytest.mark.django_db
def test_llm_failure_stores_a_rule_based_summary_replaced_by_the_next_llm_summary(agent, settings, scripted_llm):
    settings.SESSION_SUMMARY_EVERY_N_PAIRS = 2
    session = _talk(agent, 2)
    session_form_memories(session_id=session.pk, trigger="explicit")
    session.refresh_from_db()

    def provider_down(request):
        raise ProviderError("HTTP 503 from the LLM")

    scripted_llm.script("consolidate", provider_down)
    with pytest.raises(ProviderError):
        scope_consolidate(key=_session_key(session))

    memory = ConsolidatedMemory.objects.get(session=session)
    assert memory.is_rule_based and "rule-based" in memory.change_reason
    assert "Q: Can we plan day 1 of the Lisbon trip? A: Day 1: visit Belém in the morning." in memory.content
    assert ConsolidationJob.objects.get().status == "failed"

    session = _talk(agent, 1, start=2)
    session_form_memories(session_id=session.pk, trigger="explicit")
    session.refresh_from_db()
    assert session_summary_due(session=session)
    scripted_llm.script("consolidate", {"content": "- Lisbon trip planned for three days."})
    scope_consolidate(key=_session_key(session))

    memory.refresh_from_db()
    assert not memory.is_rule_based and memory.content == "- Lisbon trip planned for three days."
    assert memory.past_versions.get(version=1).content.startswith("Questions and answers:")


@pytest.mark.django_db
def test_a_summary_that_copies_the_prompts_placeholder_is_asked_again_then_replaced_by_rules(
    agent, settings, scripted_llm
):
    """What the local 270M model did on LoCoMo: it answered the placeholder of the prompt's schema line."""
    settings.SESSION_SUMMARY_EVERY_N_PAIRS = 2
    session = _talk(agent, 2)
    session_form_memories(session_id=session.pk, trigger="explicit")
    scripted_llm.script(
        "consolidate", {"content": "<the updated note>"}, {"content": "The updated note: <the updated note>"}
    )

    with pytest.raises(MalformedLLMOutput):
        scope_consolidate(key=_session_key(session))

    repair = scripted_llm.calls("consolidate")[1].messages[-1]["content"]
    assert "the content repeats the instructions" in repair
    memory = ConsolidatedMemory.objects.get(session=session)
    assert memory.is_rule_based and "<the updated note>" not in memory.content
    outcomes = list(LLMCall.objects.filter(purpose="consolidate").values_list("outcome", flat=True))
    assert outcomes == [LLMCall.Outcome.MALFORMED, LLMCall.Outcome.MALFORMED]


@pytest.mark.django_db
def test_a_rule_based_summary_of_statements_only_keeps_what_the_user_said(agent, settings, scripted_llm):
    """A session of user statements, no reflection, no question: the rules still summarise something."""
    settings.SESSION_SUMMARY_EVERY_N_PAIRS = 1
    session = session_append_messages(
        agent=agent,
        user_external_id="u",
        session_external_id="statements",
        messages=[
            MessageInput(role="user", content="I ran a half marathon in Porto. It was hot."),
            MessageInput(role="user", content="My sister came to watch"),
        ],
    ).session
    session_form_memories(session_id=session.pk, trigger="explicit")

    def provider_down(request):
        raise ProviderError("HTTP 503 from the LLM")

    scripted_llm.script("consolidate", provider_down)
    with pytest.raises(ProviderError):
        scope_consolidate(key=_session_key(session), force=True)

    memory = ConsolidatedMemory.objects.get(session=session)
    assert memory.is_rule_based
    assert memory.content == "The user said:\n- I ran a half marathon in Porto.\n- My sister came to watch."
