"""Which reranker an agent's searches use now (core.search.rerank): the agent's `reranker`, off by default. The LLM
ranks only while no LLM hold applies to the agent: its tokens count against the same budgets as formation's, and a
provider whose circuit breaker is open is not called by a search either; the search keeps its fused order."""

from __future__ import annotations

from agents.models import Agent
from agents.selectors.llm_holds import llm_hold
from core.search.rerank import Outcome, Reranker, rerank_outcome_count


def agent_reranker(*, agent: Agent) -> str:
    if agent.reranker != Reranker.LLM:
        return agent.reranker
    if llm_hold(agent=agent) is None:
        return Reranker.LLM
    rerank_outcome_count(reranker=Reranker.LLM, outcome=Outcome.HELD)
    return Reranker.OFF
