"""When formation must wait, and how it resumes: the cost guard (daily LLM token budgets, per agent and for the
deployment) and the provider's circuit breaker (core.llm.guard).

A session held back is `waiting` with a reason; its messages stay after the cursor, so nothing is lost. It is queued
again (trigger `resumed`) by `sessions_formation_resume`: the beat job every few seconds, at once when the breaker
closes (`llm_provider_recovered`), and when an operator raises an agent's budget. While the breaker is open and its
pause has run out, the resume job queues one waiting session as the probe; its success closes the breaker and the
rest follow. Consolidations skipped for a budget are remembered per agent and queued when the agent may spend again."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import redis
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from agents.models import Agent
from agents.selectors.agent_settings import agent_daily_token_budget
from conversations.models import Session
from core.llm.guard import llm_breaker_state, llm_redis, provider_key_for
from core.llm.providers import get_llm_provider
from core.llm.spend import day_end, llm_spend_today
from core.runtime.queueing import task_enqueue_safely
from formation import task_names as formation_tasks
from reflections import task_names as reflections_tasks
from reflections.selectors.consolidation_due import scopes_due_for_consolidation

logger = logging.getLogger(__name__)

Status = Session.FormationStatus
Reason = Session.WaitingReason
_DEFERRED_CONSOLIDATIONS = "consolidation-deferred-agents"


@dataclass(frozen=True)
class FormationHold:
    reason: str  # Session.WaitingReason
    detail: str


def _renews() -> str:
    return f"{day_end():%Y-%m-%d %H:%M} UTC"


def budget_hold(*, agent: Agent) -> FormationHold | None:
    budget = agent_daily_token_budget(agent=agent)
    if budget:
        spent = llm_spend_today(agent_id=agent.pk)
        if spent >= budget:
            return FormationHold(
                Reason.AGENT_BUDGET,
                f"the agent's daily LLM token budget is spent ({spent:,} of {budget:,} tokens today); formation "
                f"resumes when it renews at {_renews()} or when an operator raises it",
            )
    if settings.LLM_DAILY_TOKEN_BUDGET:
        spent = llm_spend_today(agent_id=None)
        if spent >= settings.LLM_DAILY_TOKEN_BUDGET:
            return FormationHold(
                Reason.GLOBAL_BUDGET,
                f"the deployment's daily LLM token budget is spent ({spent:,} of {settings.LLM_DAILY_TOKEN_BUDGET:,} "
                f"tokens today); formation resumes when it renews at {_renews()} or LLM_DAILY_TOKEN_BUDGET is raised",
            )
    return None


def provider_hold() -> FormationHold | None:
    provider = get_llm_provider()
    if not provider.remote:
        return None
    try:
        state = llm_breaker_state(provider_key=provider_key_for(provider_name=provider.name))
    except redis.RedisError:
        return None
    if state.state != "open":
        return None
    return FormationHold(
        Reason.PROVIDER,
        f"the LLM provider is failing ({state.consecutive_failures} failed calls in a row before the pause): "
        f"formation is paused and tries again in {state.retry_in_seconds:.0f}s",
    )


def formation_hold(*, agent: Agent) -> FormationHold | None:
    """Why formation of this agent's sessions must wait now, if it must."""
    return provider_hold() or budget_hold(agent=agent)


def session_waiting_detail(*, session: Session) -> str:
    """Why a waiting session waits, in words, with today's figures (for the API and the admin)."""
    if session.formation_status != Status.WAITING:
        return ""
    if session.formation_waiting_reason == Reason.PROVIDER:
        hold = provider_hold()
        return hold.detail if hold else "the LLM provider recovered: formation resumes within seconds"
    hold = budget_hold(agent=session.agent)
    return hold.detail if hold else "the budget allows formation again: it resumes within seconds"


def session_formation_wait(*, session_id: int, hold: FormationHold) -> bool:
    """Hold a queued or running session back (its claim, if any, is released by the caller). Compare-and-set: a
    session another worker has meanwhile formed is left alone."""
    return bool(
        Session.objects.filter(pk=session_id, formation_status__in=[Status.QUEUED, Status.RUNNING]).update(
            formation_status=Status.WAITING, formation_waiting_reason=hold.reason, formation_queued_at=timezone.now()
        )
    )


def formation_resume_soon() -> None:
    """Run the resume job now (after commit) rather than at the next beat: a budget was raised, the provider is
    back."""
    transaction.on_commit(lambda: task_enqueue_safely(formation_tasks.RESUME_FORMATION))


def formation_resume_on_provider_recovery(**_) -> None:
    """Receiver of core.llm.client.llm_provider_recovered: the circuit breaker closed, so the sessions that waited for
    the provider go now, not at the next beat."""
    formation_resume_soon()


def consolidation_defer(*, agent_id: int) -> None:
    """A consolidation skipped for the budget: queue the agent's due consolidations once it may spend again."""
    try:
        llm_redis().sadd(_deferred_key(), agent_id)
    except redis.RedisError:
        logger.warning("could not remember a deferred consolidation of agent %s: formation will queue it", agent_id)


def _deferred_key() -> str:
    return f"{settings.CACHES['default'].get('KEY_PREFIX', '')}:{_DEFERRED_CONSOLIDATIONS}"


def _sessions_requeue(*, ids: list[int]) -> int:
    """waiting → queued for these sessions (those still waiting), and their tasks enqueued."""
    if not ids:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE conversations_session SET formation_status = %s, formation_waiting_reason = '', "
            "formation_queued_at = %s WHERE id = ANY(%s) AND formation_status = %s RETURNING id",
            [Status.QUEUED, timezone.now(), ids, Status.WAITING],
        )
        requeued = [row[0] for row in cursor.fetchall()]
    for session_id in requeued:
        task_enqueue_safely(formation_tasks.FORM_SESSION_MEMORIES, session_id, "resumed")
    return len(requeued)


def sessions_formation_resume(*, limit: int = 2000) -> dict[str, int]:
    """Queue again the waiting sessions whose hold is gone (oldest first); while the breaker is open and its pause
    is over, one provider-waiting session goes as the probe."""
    counts = {"provider": 0, "budget": 0, "consolidations": 0}
    waiting = Session.objects.filter(formation_status=Status.WAITING).order_by("formation_queued_at", "pk")
    provider_waiting = waiting.filter(formation_waiting_reason=Reason.PROVIDER)
    if provider_waiting.exists():
        provider = get_llm_provider()
        state = (
            llm_breaker_state(provider_key=provider_key_for(provider_name=provider.name)).state
            if provider.remote
            else "closed"
        )
        if state != "open":
            batch = 1 if state == "half-open" else limit
            counts["provider"] = _sessions_requeue(ids=list(provider_waiting.values_list("pk", flat=True)[:batch]))
    budget_waiting = waiting.filter(formation_waiting_reason__in=[Reason.AGENT_BUDGET, Reason.GLOBAL_BUDGET])
    agent_ids = set(budget_waiting.values_list("agent_id", flat=True).distinct())
    try:
        deferred = {int(agent_id) for agent_id in llm_redis().smembers(_deferred_key())}
    except redis.RedisError:
        deferred = set()
    provider_down = provider_hold() is not None
    for agent in Agent.objects.filter(pk__in=agent_ids | deferred):
        if budget_hold(agent=agent) is not None:
            continue
        if agent.pk in agent_ids:
            ids = list(budget_waiting.filter(agent=agent).values_list("pk", flat=True)[:limit])
            counts["budget"] += _sessions_requeue(ids=ids)
        if agent.pk in deferred and not provider_down:
            counts["consolidations"] += _consolidations_requeue(agent=agent)
    return counts


def _consolidations_requeue(*, agent: Agent) -> int:
    llm_redis().srem(_deferred_key(), agent.pk)
    keys = scopes_due_for_consolidation(agent=agent)
    for key in keys:
        task_enqueue_safely(reflections_tasks.CONSOLIDATE_SCOPE, *key.as_task_args())
    return len(keys)
