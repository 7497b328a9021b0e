"""Consolidations skipped while the agent's LLM work was held (a spent budget, a failing provider): remembered per
agent in Redis, and queued once the agent may spend again (formation's resume job calls
consolidations_deferred_requeue). Their reflections stay buffered, and in the context block, meanwhile."""

from __future__ import annotations

import logging

import redis
from django.conf import settings

from agents.models import Agent
from core.llm.guard import llm_redis
from core.runtime.queueing import task_enqueue_safely
from reflections import task_names
from reflections.selectors.consolidation_due import scopes_due_for_consolidation

logger = logging.getLogger(__name__)
_DEFERRED_CONSOLIDATIONS = "consolidation-deferred-agents"


def _deferred_key() -> str:
    return f"{settings.CACHES['default'].get('KEY_PREFIX', '')}:{_DEFERRED_CONSOLIDATIONS}"


def consolidation_defer(*, agent_id: int) -> None:
    """A consolidation skipped for a hold: queue the agent's due consolidations once it may spend again."""
    try:
        llm_redis().sadd(_deferred_key(), agent_id)
    except redis.RedisError:
        logger.warning("could not remember a deferred consolidation of agent %s: formation will queue it", agent_id)


def consolidations_deferred_agent_ids() -> set[int]:
    """The agents with deferred consolidations (none when Redis cannot say)."""
    try:
        return {int(agent_id) for agent_id in llm_redis().smembers(_deferred_key())}
    except redis.RedisError:
        return set()


def consolidations_deferred_requeue(*, agent: Agent) -> int:
    """Queue the agent's due consolidations and forget the deferral. Returns how many were queued."""
    llm_redis().srem(_deferred_key(), agent.pk)
    keys = scopes_due_for_consolidation(agent=agent)
    for key in keys:
        task_enqueue_safely(task_names.CONSOLIDATE_SCOPE, *key.as_task_args())
    return len(keys)
