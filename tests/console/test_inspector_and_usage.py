"""The memory inspector and the LLM usage page."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from agents.models import Agent
from core.models import LLMCall
from core.selectors.llm_usage import llm_usage_daily, llm_usage_windows
from formation.selectors.llm_validity import llm_reply_validity
from reflections.models import ConsolidationJob, MemoryScope, Reflection
from tests.factories import AgentFactory

pytestmark = pytest.mark.django_db


def test_the_inspector_shows_context_block_hits_with_ranks_and_bundle_parts(
    admin_client, agent, end_user, session, paris_fact, user_blob, scripted_llm
):
    Reflection.objects.create(
        agent=agent, user=end_user, session=session, scope=MemoryScope.SESSION, content="Planning a move."
    )

    response = admin_client.get(
        reverse("admin:memory_inspector"),
        {"agent": agent.pk, "session": "session-1", "message": "Where do I live now?", "token_budget": 500},
    )

    page = response.content.decode()
    context_block = page.split('id="inspector-context"', 1)[1].split('id="inspector-hits"', 1)[0]
    hits = page.split('id="inspector-hits"', 1)[1].split('id="inspector-bundle"', 1)[0]
    assert "&lt;UserMemory&gt;" in context_block and "Planning a move." in context_block
    assert "Gene lives in Paris." in hits
    assert "Memory bundle: " in page and "of 500 tokens" in page
    for part in ("context", "recent_turns", "facts", "similar_messages"):
        assert f'data-part="{part}"' in page
    assert scripted_llm.requests == []  # the inspector reads; it never calls the LLM


def test_the_inspector_says_when_a_user_is_unknown(admin_client, agent):
    page = admin_client.get(
        reverse("admin:memory_inspector"), {"agent": agent.pk, "user": "nobody", "message": "hi", "token_budget": 500}
    ).content.decode()

    assert "has no user &#x27;nobody&#x27;" in page


def _call(agent: Agent | None, *, outcome: str = "ok", tokens: int = 100, days_ago: float = 0) -> LLMCall:
    call = LLMCall.objects.create(
        agent=agent,
        purpose="extract_facts",
        provider="openai",
        model="m",
        prompt_tokens=tokens,
        completion_tokens=tokens // 10,
        latency_ms=200,
        outcome=outcome,
    )
    LLMCall.objects.filter(pk=call.pk).update(created_at=timezone.now() - timedelta(days=days_ago))
    return call


def test_usage_per_agent_over_the_day_and_the_week(agent):
    other = AgentFactory()
    _call(agent, tokens=1000)
    _call(agent, outcome="malformed", tokens=500)
    _call(agent, tokens=100, days_ago=3)
    _call(other, outcome="provider_error", tokens=0, days_ago=2)
    _call(agent, tokens=100_000, days_ago=9)  # older than a week: in neither window

    day, week = llm_usage_windows()

    assert [(usage.agent_id, usage.calls, usage.failures) for usage in day.agents] == [(agent.pk, 2, 1)]
    assert day.agents[0].total_tokens == 1000 + 100 + 500 + 50
    assert [(usage.agent_id, usage.calls, usage.failures) for usage in week.agents] == [
        (agent.pk, 3, 1),
        (other.pk, 1, 1),
    ]
    daily = llm_usage_daily(days=14)
    assert len(daily) == 14 and daily[-1].calls == 2 and daily[-4].calls == 1 and daily[-10].calls == 1


def test_the_usage_page_draws_bars_server_side(admin_client, agent):
    _call(agent, tokens=1000)
    _call(agent, outcome="malformed", tokens=500)

    page = admin_client.get(reverse("admin:core_llmcall_usage")).content.decode()

    assert page.count('class="usage-day"') == 14 and "<svg" in page
    assert "2 calls, 1 failed" in page and 'style="width: 100%"' in page
    assert "http" not in page.split("<svg", 1)[1].split("</svg>", 1)[0].replace("http://www.w3.org", "")


def test_reply_validity_per_step_counts_valid_replies_and_the_rules_they_broke(admin_client, agent, end_user, session):
    for outcome, violations in [("ok", {}), ("ok", {"question": 2, "over_word_limit": 1}), ("malformed", {})]:
        LLMCall.objects.create(
            agent=agent,
            purpose="extract_facts",
            provider="openai",
            outcome=outcome,
            rule_violations=violations,
        )
    LLMCall.objects.create(agent=agent, purpose="extract_facts", provider="openai", outcome="provider_error")
    summary = ConsolidationJob.objects.create(agent=agent, user=end_user, session=session, scope=MemoryScope.SESSION)
    user_note = ConsolidationJob.objects.create(agent=agent, user=end_user, scope=MemoryScope.USER)
    for job in (summary, user_note):
        LLMCall.objects.create(
            agent=agent,
            purpose="consolidate",
            provider="openai",
            outcome="ok",
            job_kind="consolidation",
            job_id=job.pk,
        )

    steps = {step.step: step for step in llm_reply_validity(since=timezone.now() - timedelta(days=1))}

    assert set(steps) == {"extract_facts", "consolidate", "summarize_session"}
    facts = steps["extract_facts"]
    assert (facts.replies, facts.valid, facts.with_violations) == (3, 2, 1)  # the provider error was no reply
    assert facts.violations == {"question": 2, "over_word_limit": 1}
    assert round(facts.valid_percent, 1) == 66.7 and facts.violating_percent == 50.0
    assert steps["summarize_session"].replies == steps["consolidate"].replies == 1
    page = admin_client.get(reverse("admin:core_llmcall_usage")).content.decode()
    table = page.split('id="reply-validity"', 1)[1]
    assert table.count('class="validity-row"') == 3
    assert "66.7%" in table and "question 2, over_word_limit 1" in table
