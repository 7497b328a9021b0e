"""Whether an agent's LLM work (formation, consolidation) must wait now, and why: the cost guard (daily LLM token
budgets, per agent and for the deployment) and the provider's circuit breaker (core.llm.guard). Formation holds its
sessions back on a hold (formation.services.formation_holds); consolidation defers its scopes
(reflections.services.consolidation_deferral)."""

from __future__ import annotations

from dataclasses import dataclass

import redis
from django.conf import settings

from agents.models import Agent
from agents.selectors.agent_settings import agent_daily_token_budget
from core.llm.guard import llm_breaker_state, provider_key_for
from core.llm.providers import get_llm_provider
from core.llm.spend import day_end, llm_spend_today

# The reasons of a hold: the values of a waiting session's formation_waiting_reason (conversations.models.Session).
AGENT_BUDGET = "agent_budget"
GLOBAL_BUDGET = "global_budget"
PROVIDER = "provider"


@dataclass(frozen=True)
class LLMHold:
    reason: str  # AGENT_BUDGET, GLOBAL_BUDGET or PROVIDER
    detail: str


def _renews() -> str:
    return f"{day_end():%Y-%m-%d %H:%M} UTC"


def budget_hold(*, agent: Agent) -> LLMHold | None:
    budget = agent_daily_token_budget(agent=agent)
    if budget:
        spent = llm_spend_today(agent_id=agent.pk)
        if spent >= budget:
            return LLMHold(
                AGENT_BUDGET,
                f"the agent's daily LLM token budget is spent ({spent:,} of {budget:,} tokens today); formation "
                f"resumes when it renews at {_renews()} or when an operator raises it",
            )
    if settings.LLM_DAILY_TOKEN_BUDGET:
        spent = llm_spend_today(agent_id=None)
        if spent >= settings.LLM_DAILY_TOKEN_BUDGET:
            return LLMHold(
                GLOBAL_BUDGET,
                f"the deployment's daily LLM token budget is spent ({spent:,} of {settings.LLM_DAILY_TOKEN_BUDGET:,} "
                f"tokens today); formation resumes when it renews at {_renews()} or LLM_DAILY_TOKEN_BUDGET is raised",
            )
    return None


def provider_hold() -> LLMHold | None:
    provider = get_llm_provider()
    if not provider.remote:
        return None
    try:
        state = llm_breaker_state(provider_key=provider_key_for(provider_name=provider.name))
    except redis.RedisError:
        return None
    if state.state != "open":
        return None
    return LLMHold(
        PROVIDER,
        f"the LLM provider is failing ({state.consecutive_failures} failed calls in a row before the pause): "
        f"formation is paused and tries again in {state.retry_in_seconds:.0f}s",
    )


def llm_hold(*, agent: Agent) -> LLMHold | None:
    """Why this agent's LLM work must wait now, if it must."""
    return provider_hold() or budget_hold(agent=agent)
