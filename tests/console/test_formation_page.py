"""The admin's Formation page and the agent's cost guard: backlog, spend against budget, and raising a budget queues
the agent's waiting sessions at once."""

from __future__ import annotations

import pytest
from django.urls import reverse

from agents.models import Agent
from conversations.models import Session
from core.models import LLMCall
from formation.models import FormationJob
from tests.formation_support import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def _spent(agent: Agent, tokens: int) -> None:
    LLMCall.objects.create(agent=agent, purpose="reflect", provider="openai", prompt_tokens=tokens, outcome="ok")


def test_the_formation_page_shows_the_backlog_and_each_agent_s_spend_against_its_budget(admin_client, agent, session):
    agent.llm_daily_token_budget = 2000
    agent.save()
    _spent(agent, 3000)
    Session.objects.filter(pk=session.pk).update(formation_status="waiting", formation_waiting_reason="agent_budget")

    page = admin_client.get(reverse("admin:formation_status")).content.decode()

    backlog = page.split('id="formation-backlog"', 1)[1].split('id="formation-budgets"', 1)[0]
    budgets = page.split('id="formation-budgets"', 1)[1]
    assert 'waiting for a budget</a></td><td class="number">1</td>' in backlog
    assert "3000" in budgets and "2000" in budgets and "100%" in budgets
    assert "offline" in page  # the test settings' LLM: no breaker to show


def test_the_agent_list_shows_spend_and_raising_the_budget_forms_its_waiting_sessions(
    admin_client, agent, session, celery_worker_process
):
    agent.llm_daily_token_budget = 1000
    agent.save()
    _spent(agent, 1500)
    Session.objects.filter(pk=session.pk).update(formation_status="waiting", formation_waiting_reason="agent_budget")
    listing = admin_client.get(reverse("admin:agents_agent_changelist")).content.decode()
    assert "1,500 / 1,000 (100%)" in listing

    change_url = reverse("admin:agents_agent_change", args=[agent.pk])
    form = admin_client.get(change_url).context["adminform"].form
    data = {name: value for name, value in form.initial.items() if value is not None}
    data |= {"external_id": agent.external_id, "name": agent.name, "llm_daily_token_budget": 100_000}
    response = admin_client.post(change_url, data)

    assert response.status_code == 302, response.content.decode()[:2000]
    # The worker resumes the agent's waiting sessions and forms them (the session has no messages: a job of none).
    job = wait_until(
        lambda: FormationJob.objects.filter(session=session, status="succeeded").first(),
        timeout=60,
        what="the waiting session formed once the budget was raised",
        process=celery_worker_process,
    )
    assert job.trigger == "resumed"
    session.refresh_from_db()
    assert session.formation_waiting_reason == ""
