"""The memory bundle on real PostgreSQL + pgvector with the real local embedding model: parts, budget, switches."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from agents.models import Agent, EndUser
from conversations.models import Message, Session
from conversations.services.message_embeddings import messages_embed_missing
from core.llm.tokens import count_tokens
from core.safety.fencing import MEMORY_NOTICE_BLOCK
from facts.services.facts import fact_create
from reflections.models import ConsolidatedMemory, MemoryScope, Reflection
from reflections.selectors.bundle import BUNDLE_PART_NAMES, BundleLimits, memory_bundle_build, text_shorten_to_tokens
from tests.factories import AgentFactory, EndUserFactory, MessageFactory, SessionFactory
from tests.memory_client_support import MemoryAPIError, memory_client_for

QUERY = "Which vet should I take my dog to?"


def _say(session: Session, role: str, content: str, *, minutes_ago: int) -> Message:
    message = MessageFactory(
        session=session,
        role=role,
        content=content,
        token_count=count_tokens(content),
        created_at=timezone.now() - timedelta(minutes=minutes_ago),
    )
    Session.objects.filter(pk=session.pk).update(message_count=session.messages.count())
    return message


@pytest.fixture
def memory(agent: Agent, end_user: EndUser, session: Session) -> dict:
    ConsolidatedMemory.objects.create(agent=agent, scope=MemoryScope.AGENT, content="Answer briefly.", word_limit=1000)
    ConsolidatedMemory.objects.create(
        agent=agent,
        user=end_user,
        session=session,
        scope=MemoryScope.SESSION,
        content="The user is moving to Lyon next month with their beagle.",
        word_limit=400,
    )
    Reflection.objects.create(agent=agent, user=end_user, scope=MemoryScope.USER, content="The user is anxious.")
    fact_create(agent=agent, user=end_user, scopes=["user"], content="The user adopted a beagle named Biscuit")
    fact_create(agent=agent, user=end_user, scopes=["user"], content="The user is allergic to peanuts")
    fact_create(agent=agent, user=None, scopes=["agent"], content="Support hours are 9am to 5pm CET")

    earlier = SessionFactory(user=end_user, external_id="session-0")
    old_vet = _say(earlier, "user", "Biscuit the dog had a checkup at the Lyon veterinary clinic", minutes_ago=5000)
    _say(earlier, "assistant", "Glad the checkup went well.", minutes_ago=4999)
    _say(session, "user", "I need to book movers for Tuesday.", minutes_ago=30)
    _say(session, "assistant", "Shall I compare three moving companies?", minutes_ago=29)
    last = _say(session, "user", QUERY, minutes_ago=1)
    messages_embed_missing(message_ids=Message.objects.values_list("pk", flat=True))
    session.refresh_from_db()
    return {"old_vet": old_vet, "last": last, "earlier": earlier}


def test_bundle_has_every_part_with_token_counts_that_add_up(agent, end_user, session, memory):
    bundle = memory_bundle_build(agent=agent, user=end_user, session=session, query=QUERY, token_budget=4000)
    parts = bundle.parts

    assert list(parts) == list(BUNDLE_PART_NAMES)
    assert parts["context"].status == "included" and "<SessionMemory>" in parts["context"].text
    assert parts["session_summary"].status == "in_context" and parts["session_summary"].tokens == 0
    assert [item["content"] for item in parts["recent_turns"].items][-1] == QUERY
    assert parts["recent_turns"].text.startswith("<RecentTurns>\nuser: I need to book movers")
    assert parts["facts"].items[0]["content"] == "The user adopted a beagle named Biscuit"
    similar_ids = [item["id"] for item in parts["similar_messages"].items]
    assert similar_ids[0] == memory["old_vet"].pk
    assert memory["last"].pk not in similar_ids  # already among the recent turns
    assert parts["similar_messages"].items[0]["session"] == "session-0"
    for part in parts.values():
        assert part.tokens == count_tokens(part.text)
    assert bundle.tokens_used == sum(part.tokens for part in parts.values()) == count_tokens(bundle.text)


@pytest.mark.parametrize("share", [0.05, 0.25, 0.5, 0.75, 0.95])
def test_bundle_never_exceeds_the_token_budget(agent, end_user, session, memory, share):
    everything = memory_bundle_build(agent=agent, user=end_user, session=session, query=QUERY, token_budget=100_000)
    budget = int(everything.tokens_used * share)

    bundle = memory_bundle_build(agent=agent, user=end_user, session=session, query=QUERY, token_budget=budget)

    assert bundle.tokens_used <= budget
    assert count_tokens(bundle.text) == bundle.tokens_used
    assert any(part.status in ("over_budget", "partial") for part in bundle.parts.values())
    if share >= 0.5:
        assert bundle.tokens_used >= budget * 0.5  # the budget is used, not just respected


def test_small_budget_drops_the_context_block_and_keeps_the_session_summary_and_newest_turn(
    agent, end_user, session, memory
):
    limits = BundleLimits(part_token_limits={"context": 20, "recent_turns": 25})
    budget = 70 + count_tokens(MEMORY_NOTICE_BLOCK)  # the notice comes first when the context block is left out
    bundle = memory_bundle_build(
        agent=agent, user=end_user, session=session, query=QUERY, token_budget=budget, limits=limits
    )

    assert bundle.parts["context"].status == "over_budget" and bundle.parts["context"].tokens == 0
    assert bundle.parts["session_summary"].status == "included"
    assert "moving to Lyon" in bundle.parts["session_summary"].text
    turns = bundle.parts["recent_turns"]
    assert turns.items[-1]["id"] == memory["last"].pk and turns.status == "partial" and turns.omitted >= 1
    assert bundle.parts["notice"].status == "included" and bundle.text.startswith(MEMORY_NOTICE_BLOCK)
    assert bundle.tokens_used <= budget


def test_switches_off_per_agent_leave_their_parts_out(agent, end_user, session, memory):
    Agent.objects.filter(pk=agent.pk).update(rag_enabled=False, always_in_context_enabled=False)
    agent.refresh_from_db()

    bundle = memory_bundle_build(agent=agent, user=end_user, session=session, query=QUERY, token_budget=4000)

    assert bundle.parts["context"].status == "disabled" and bundle.parts["facts"].status == "disabled"
    assert bundle.parts["session_summary"].status == "included"
    assert "Biscuit" not in bundle.parts["facts"].text


def test_a_long_turn_is_shortened_to_fit_rather_than_dropped(agent, end_user, session, memory):
    _say(session, "user", "word " * 2000, minutes_ago=0)

    bundle = memory_bundle_build(agent=agent, user=end_user, session=session, query=QUERY, token_budget=4000)

    newest = bundle.parts["recent_turns"].items[-1]
    assert newest["truncated"] and newest["content"].endswith("…")
    assert bundle.parts["recent_turns"].tokens <= bundle.parts["recent_turns"].token_limit


def test_text_shorten_to_tokens_keeps_whole_words():
    text = "The quick brown fox jumps over the lazy dog"

    assert text_shorten_to_tokens(text=text, max_tokens=100) == text
    assert text_shorten_to_tokens(text=text, max_tokens=5) == "The quick brown fox …"
    assert text_shorten_to_tokens(text=text, max_tokens=1) == ""


@pytest.mark.django_db(transaction=True)
def test_bundle_endpoint_through_the_python_client(live_server):
    agent = AgentFactory(external_id="agent-bundle")
    user = EndUserFactory(agent=agent, external_id="gene")
    session = SessionFactory(user=user, external_id="s-1")
    fact_create(agent=agent, user=user, scopes=["user"], content="Gene works night shifts at Lyon hospital")
    _say(session, "user", "Any tips for my night shifts?", minutes_ago=1)
    client = memory_client_for(agent=agent, base_url=live_server.url)

    bundle = client.bundle(query="Any tips for my night shifts?", user="gene", session="s-1", token_budget=300)

    assert bundle["tokens_used"] <= 300
    assert bundle["parts"]["facts"]["items"][0]["content"] == "Gene works night shifts at Lyon hospital"
    assert bundle["parts"]["recent_turns"]["tokens"] == count_tokens(bundle["parts"]["recent_turns"]["text"])
    assert set(bundle["parts"]) == set(BUNDLE_PART_NAMES)

    with pytest.raises(MemoryAPIError) as bad_limits:
        client.bundle(query="hi", user="gene", part_token_limits={"everything": 5})
    with pytest.raises(MemoryAPIError) as bad_budget:
        client.bundle(query="hi", user="gene", token_budget=0)
    assert bad_limits.value.status == 400 and "part_token_limits" in bad_limits.value.fields
    assert bad_budget.value.status == 400 and "token_budget" in bad_budget.value.fields
