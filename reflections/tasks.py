"""Background jobs of the reflections app. Tasks take ids or nothing, are idempotent (acks_late is safe for them), and
retry provider errors with exponential backoff and jitter."""

from __future__ import annotations

from datetime import timedelta

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.utils import timezone

from agents.models import Agent
from agents.selectors.llm_holds import llm_hold
from conversations.models import Session
from core.exceptions import ProviderError, ProviderPaused
from core.llm.client import llm_calls_write, llm_job_calls
from core.runtime.queueing import retry_backoff_seconds
from reflections import task_names
from reflections.selectors.context import memory_context_refresh
from reflections.services.consolidation import ScopeKey, scope_consolidate
from reflections.services.consolidation_deferral import consolidation_defer


@shared_task(name="reflections.memory_context_refresh_active", ignore_result=True)
def memory_context_refresh_active() -> int:
    """Beat, every 5 minutes: re-cache the always-in-context block of every recently active, open session, so the
    next read is a cache hit even after an invalidation. Running it twice only recomputes the same blocks."""
    active_since = timezone.now() - timedelta(minutes=settings.MEMORY_CONTEXT_REFRESH_ACTIVE_MINUTES)
    sessions = (
        Session.objects.filter(
            last_activity_at__gte=active_since, closed_at__isnull=True, agent__always_in_context_enabled=True
        )
        .select_related("agent", "user")
        .order_by("pk")
    )
    refreshed = 0
    for session in sessions.iterator(chunk_size=500):
        memory_context_refresh(agent=session.agent, user=session.user, session=session)
        refreshed += 1
    return refreshed


@shared_task(name=task_names.CONSOLIDATE_SCOPE, bind=True, acks_late=True, max_retries=None)
def scope_consolidate_task(
    self: Task, agent_id: int, scope: str, user_id: int | None, session_id: int | None, force: bool = False
) -> int | None:
    """Consolidate one scope, under the agent's LLM holds (a spent budget, a failing provider): a held consolidation
    is deferred, its reflections stay buffered (and in the context block), and formation's resume job queues it."""
    if llm_hold(agent=Agent.objects.get(pk=agent_id)) is not None:
        consolidation_defer(agent_id=agent_id)
        return None
    try:
        with llm_job_calls(time_limit_seconds=settings.CELERY_TASK_SOFT_TIME_LIMIT) as calls:
            try:
                job = scope_consolidate(
                    key=ScopeKey(agent_id=agent_id, scope=scope, user_id=user_id, session_id=session_id),
                    task_id=self.request.id or "",
                    force=force,
                )
            finally:
                llm_calls_write(records=calls)
    except ProviderPaused:
        consolidation_defer(agent_id=agent_id)
        return None
    except (ProviderError, SoftTimeLimitExceeded) as error:
        if self.request.retries >= settings.FORMATION_MAX_RETRIES:
            raise
        raise self.retry(exc=error, countdown=retry_backoff_seconds(self.request.retries, error)) from error
    return job.pk if job else None


@shared_task(name="conversations.consolidate_scope", bind=True, acks_late=True, max_retries=None)
def scope_consolidate_legacy_task(
    self: Task, agent_id: int, scope: str, user_id: int | None, session_id: int | None, force: bool = False
) -> int | None:
    """The task's name in an older release: consolidations it queued still run after an upgrade. Nothing queues it
    any more."""
    return scope_consolidate_task.run(agent_id, scope, user_id, session_id, force)
