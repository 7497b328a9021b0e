"""Agents as the administration API creates and changes them (the admin edits the same fields through its form):
the external id once, then the name and every per-agent setting."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from agents.models import Agent
from agents.selectors.agent_settings import OVERRIDABLE_SETTINGS

# Every per-agent setting an operator may change, as the admin's agent page edits them.
AGENT_SETTINGS = (
    "name",
    "rag_enabled",
    "always_in_context_enabled",
    "profile_in_context",
    "sensitive_data",
    "agent_memory_from_users",
    "reranker",
    *OVERRIDABLE_SETTINGS,
    "max_current_facts_per_user",
    "max_current_facts_per_agent",
    "max_embedded_messages_per_session",
    "llm_daily_token_budget",
    "memory_categories",
    "default_categories_enabled",
    "categories_never_remembered",
    "extraction_instructions",
)


@transaction.atomic
def agent_create(*, external_id: str, **settings: Any) -> Agent:
    unknown = set(settings) - set(AGENT_SETTINGS)
    if unknown:
        raise TypeError(f"not agent settings: {', '.join(sorted(unknown))}")
    return Agent.objects.create(external_id=external_id, **settings)


@transaction.atomic
def agent_update(*, agent: Agent, **changes: Any) -> Agent:
    """Change the given settings; None clears an override (the deployment's setting applies again)."""
    unknown = set(changes) - set(AGENT_SETTINGS)
    if unknown:
        raise TypeError(f"not agent settings: {', '.join(sorted(unknown))}")
    for name, value in changes.items():
        setattr(agent, name, value)
    if changes:
        agent.save(update_fields=[*changes, "updated_at"])
    return agent
