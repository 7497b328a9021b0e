"""The thresholds and the LLM budget in force for an agent: its own override where set, else the deployment's
setting."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from agents.models import Agent

# Agent field -> deployment setting it overrides.
OVERRIDABLE_SETTINGS = {
    "formation_msg_interval": "MEMORY_FORMATION_MSG_INTERVAL",
    "formation_token_interval": "MEMORY_FORMATION_TOKEN_INTERVAL",
    "cold_after_minutes": "CONSIDER_COLD_AFTER_MINUTES",
    "min_messages_for_formation": "NEVER_FORM_MEMORIES_LESS_THAN_N_MESSAGES",
    "consolidation_threshold_agent": "CONSOLIDATION_THRESHOLD_AGENT",
    "consolidation_threshold_user": "CONSOLIDATION_THRESHOLD_USER",
    "consolidation_threshold_session": "CONSOLIDATION_THRESHOLD_SESSION",
    "blob_word_limit_agent": "BLOB_WORD_LIMIT_AGENT",
    "blob_word_limit_user": "BLOB_WORD_LIMIT_USER",
    "blob_word_limit_session": "BLOB_WORD_LIMIT_SESSION",
}


@dataclass(frozen=True)
class AgentThresholds:
    formation_msg_interval: int
    formation_token_interval: int
    cold_after_minutes: int
    min_messages_for_formation: int
    consolidation_threshold_agent: int
    consolidation_threshold_user: int
    consolidation_threshold_session: int
    blob_word_limit_agent: int
    blob_word_limit_user: int
    blob_word_limit_session: int

    def consolidation_threshold(self, scope: str) -> int:
        return getattr(self, f"consolidation_threshold_{scope}")

    def blob_word_limit(self, scope: str) -> int:
        return getattr(self, f"blob_word_limit_{scope}")


def agent_thresholds(*, agent: Agent) -> AgentThresholds:
    values = {}
    for field_name, setting_name in OVERRIDABLE_SETTINGS.items():
        override = getattr(agent, field_name)
        values[field_name] = override if override is not None else getattr(settings, setting_name)
    return AgentThresholds(**values)


def agent_daily_token_budget(*, agent: Agent) -> int:
    """The agent's budget of tokens per UTC day; 0 means none."""
    if agent.llm_daily_token_budget is not None:
        return agent.llm_daily_token_budget
    return settings.LLM_AGENT_DAILY_TOKEN_BUDGET
