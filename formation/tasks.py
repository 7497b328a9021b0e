"""Background work of the formation pipeline. Tasks take ids, are idempotent (acks_late is safe for them), and
retry provider errors with exponential backoff and jitter."""

from __future__ import annotations

import random

from celery import Task, current_app, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from conversations.services.message_embeddings import messages_embedding_sweep
from core.exceptions import ProviderError
from core.runtime.queueing import retry_backoff_seconds
from formation import task_names
from formation.services.formation import SessionLocked, session_form_memories
from formation.services.formation_holds import sessions_formation_resume
from formation.services.formation_triggers import sessions_formation_sweep
from formation.services.retention import retention_enforce_all

# Appends hold a session's row for milliseconds: a claim that met one comes back this soon.
LOCKED_RETRY_SECONDS = (0.5, 2.0)


@shared_task(name=task_names.FORM_SESSION_MEMORIES, bind=True, acks_late=True, max_retries=None)
def session_form_memories_task(self: Task, session_id: int, trigger: str) -> dict | None:
    may_retry = self.request.retries < settings.FORMATION_MAX_RETRIES
    try:
        outcome = session_form_memories(
            session_id=session_id, trigger=trigger, task_id=self.request.id or "", may_retry=may_retry
        )
    except SessionLocked as error:
        if not may_retry:
            raise  # the session stays queued; the sweep queues it again after its grace period
        raise self.retry(exc=error, countdown=random.uniform(*LOCKED_RETRY_SECONDS)) from error
    except (ProviderError, SoftTimeLimitExceeded) as error:
        if not may_retry:
            raise
        raise self.retry(exc=error, countdown=retry_backoff_seconds(self.request.retries, error)) from error
    if outcome is None:
        return None
    job = outcome.job
    return {"job": job.pk, "facts_added": job.facts_added, "reflections_added": job.reflections_added}


@shared_task(name=task_names.RESUME_FORMATION, ignore_result=True)
def sessions_formation_resume_task() -> dict:
    """Beat, every few seconds, and at once when the LLM provider recovers or a budget is raised: queue again the
    sessions (and consolidations) that waited for a budget or for the provider, once they may go."""
    return sessions_formation_resume()


@shared_task(name=task_names.SWEEP_FORMATION)
def sessions_formation_sweep_task() -> dict:
    """Also re-queues the embedding of messages whose task a broker outage lost."""
    return sessions_formation_sweep() | {"messages_to_embed": messages_embedding_sweep()}


@shared_task(name=task_names.ENFORCE_RETENTION)
def retention_enforce_all_task() -> dict:
    return retention_enforce_all()


def _legacy_task(old_name: str, task_name: str) -> Task:
    """A task registered under a name this work had before it moved here: it queues the same arguments under the
    current name, which then runs with its own retries, routes and time limits."""

    @shared_task(name=old_name, ignore_result=True)
    def legacy_task(*args: object, **kwargs: object) -> str:
        return current_app.send_task(task_name, args=args, kwargs=kwargs).id

    return legacy_task


legacy_tasks = {old: _legacy_task(old, new) for old, new in task_names.LEGACY_NAMES.items()}
