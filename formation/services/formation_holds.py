"""When formation must wait, and how it resumes. The holds themselves (the cost guard's daily LLM token budgets, per
agent and for the deployment, and the provider's circuit breaker) are agents.selectors.llm_holds.

A session held back is `waiting` with a reason; its messages stay after the cursor, so nothing is lost. It is queued
again (trigger `resumed`) by `sessions_formation_resume`: the beat job every few seconds, at once when the breaker
closes (`llm_provider_recovered`), and when an operator raises an agent's budget. While the breaker is open and its
pause has run out, the resume job queues one waiting session as the probe; its success closes the breaker and the
rest follow. Consolidations skipped for a hold (reflections.services.consolidation_deferral) are queued by the same job
when the agent may spend again."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from agents.models import Agent
from agents.selectors.llm_holds import LLMHold, budget_hold, provider_hold
from conversations.models import Session
from core.llm.guard import llm_breaker_state, provider_key_for
from core.llm.providers import get_llm_provider
from core.runtime.queueing import task_enqueue_safely
from formation import task_names as formation_tasks
from reflections.services.consolidation_deferral import (
    consolidations_deferred_agent_ids,
    consolidations_deferred_requeue,
)

Status = Session.FormationStatus
Reason = Session.WaitingReason


def session_waiting_detail(*, session: Session) -> str:
    """Why a waiting session waits, in words, with today's figures (for the API and the admin)."""
    if session.formation_status != Status.WAITING:
        return ""
    if session.formation_waiting_reason == Reason.PROVIDER:
        hold = provider_hold()
        return hold.detail if hold else "the LLM provider recovered: formation resumes within seconds"
    hold = budget_hold(agent=session.agent)
    return hold.detail if hold else "the budget allows formation again: it resumes within seconds"


def session_formation_wait(*, session_id: int, hold: LLMHold) -> bool:
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


def formation_resume_on_provider_recovery(**_: object) -> None:
    """Receiver of core.llm.client.llm_provider_recovered: the circuit breaker closed, so the sessions that waited for
    the provider go now, not at the next beat."""
    formation_resume_soon()


def _sessions_requeue(*, ids: list[int]) -> int:
    """waiting → queued for these sessions (those still waiting), and their tasks enqueued."""
    if not ids:
        return 0
    with transaction.atomic():
        requeued = list(
            Session.objects.select_for_update(no_key=True)
            .filter(pk__in=ids, formation_status=Status.WAITING)
            .values_list("pk", flat=True)
        )
        Session.objects.filter(pk__in=requeued).update(
            formation_status=Status.QUEUED, formation_waiting_reason="", formation_queued_at=timezone.now()
        )
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
    deferred = consolidations_deferred_agent_ids()
    provider_down = provider_hold() is not None
    for agent in Agent.objects.filter(pk__in=agent_ids | deferred):
        if budget_hold(agent=agent) is not None:
            continue
        if agent.pk in agent_ids:
            ids = list(budget_waiting.filter(agent=agent).values_list("pk", flat=True)[:limit])
            counts["budget"] += _sessions_requeue(ids=ids)
        if agent.pk in deferred and not provider_down:
            counts["consolidations"] += consolidations_deferred_requeue(agent=agent)
    return counts
