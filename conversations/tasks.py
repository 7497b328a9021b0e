"""Background work of the formation pipeline. Tasks take ids, are idempotent (acks_late is safe for them), and
retry provider errors with exponential backoff and jitter."""

from __future__ import annotations

import random

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from conversations.services.formation import session_form_memories
from conversations.services.formation_triggers import sessions_formation_sweep
from conversations.services.message_embeddings import messages_embed_missing, messages_embedding_sweep
from conversations.services.retention import retention_enforce_all
from core.exceptions import ProviderError
from reflections.services.consolidation import ScopeKey, scope_consolidate


def backoff_seconds(retries: int) -> float:
    """Exponential backoff with full jitter, capped at ten minutes."""
    return random.uniform(0, min(600, 5 * 2**retries))


@shared_task(name="conversations.form_session_memories", bind=True, acks_late=True, max_retries=None)
def session_form_memories_task(self, session_id: int, trigger: str) -> dict | None:
    may_retry = self.request.retries < settings.FORMATION_MAX_RETRIES
    try:
        outcome = session_form_memories(
            session_id=session_id, trigger=trigger, task_id=self.request.id or "", may_retry=may_retry
        )
    except (ProviderError, SoftTimeLimitExceeded) as error:
        if not may_retry:
            raise
        raise self.retry(exc=error, countdown=backoff_seconds(self.request.retries)) from error
    if outcome is None:
        return None
    job = outcome.job
    return {"job": job.pk, "facts_added": job.facts_added, "reflections_added": job.reflections_added}


@shared_task(name="conversations.consolidate_scope", bind=True, acks_late=True, max_retries=None)
def scope_consolidate_task(
    self, agent_id: int, scope: str, user_id: int | None, session_id: int | None, force: bool = False
) -> int | None:
    try:
        job = scope_consolidate(
            key=ScopeKey(agent_id=agent_id, scope=scope, user_id=user_id, session_id=session_id),
            task_id=self.request.id or "",
            force=force,
        )
    except (ProviderError, SoftTimeLimitExceeded) as error:
        if self.request.retries >= settings.FORMATION_MAX_RETRIES:
            raise
        raise self.retry(exc=error, countdown=backoff_seconds(self.request.retries)) from error
    return job.pk if job else None


@shared_task(name="conversations.sweep_formation")
def sessions_formation_sweep_task() -> dict:
    """Also re-queues the embedding of messages whose task a broker outage lost."""
    return sessions_formation_sweep() | {"messages_to_embed": messages_embedding_sweep()}


@shared_task(
    name="conversations.embed_messages",
    acks_late=True,
    autoretry_for=(ProviderError,),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=5,
)
def messages_embed_task(message_ids: list[int]) -> int:
    return messages_embed_missing(message_ids=message_ids)


@shared_task(name="conversations.enforce_retention")
def retention_enforce_all_task() -> dict:
    return retention_enforce_all()
