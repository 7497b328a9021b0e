"""Which reranker an agent's searches use (agents.selectors.reranking): its setting, off by default; the LLM only
while no LLM hold applies to the agent, its tokens counted against the same budget as formation's."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from prometheus_client import REGISTRY

from agents.selectors.reranking import agent_reranker
from core.llm.spend import llm_spend_add, llm_spend_today
from core.search.rerank import hits_reranked
from tests.factories import AgentFactory

pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Hit:
    text: str
    rerank_rank: int | None = None
    rerank_score: float | None = None


def _held() -> float:
    return REGISTRY.get_sample_value("memory_rerank_total", {"reranker": "llm", "outcome": "held"}) or 0.0


def test_off_by_default_and_as_set_otherwise():
    assert agent_reranker(agent=AgentFactory()) == "off"
    assert agent_reranker(agent=AgentFactory(reranker="http")) == "http"
    assert agent_reranker(agent=AgentFactory(reranker="llm")) == "llm"


def test_the_llm_does_not_rerank_once_the_agents_budget_is_spent(scripted_llm):
    agent = AgentFactory(reranker="llm", llm_daily_token_budget=100)
    scripted_llm.script("rerank", {"order": [2, 1]})
    reranked = hits_reranked(
        reranker=agent_reranker(agent=agent),
        query="which letter",
        hits=[Hit("a"), Hit("b")],
        text=lambda hit: hit.text,
        agent_id=agent.pk,
    )
    assert [hit.text for hit in reranked] == ["b", "a"]
    assert llm_spend_today(agent_id=agent.pk) == 15  # the scripted reply's tokens, on the agent's budget
    llm_spend_add(agent_id=agent.pk, tokens=100)
    held = _held()

    assert agent_reranker(agent=agent) == "off"
    assert _held() == held + 1
