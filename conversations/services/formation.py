"""Memory formation for one session: claim, read the messages after the cursor, extract facts, reconcile them,
draft reflections, then store everything and move the cursor in one transaction. A run that fails stores
nothing and leaves the cursor where it was, so the next run covers the same messages; a run repeated after
success finds nothing after the cursor."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from conversations.models import FormationJob, Message, Session
from conversations.services.conversation_text import conversation_window
from conversations.services.formation_triggers import formation_request, session_formation_due_by_interval
from core.exceptions import ProviderError
from core.models import JobStatus
from core.queueing import task_enqueue_safely
from facts.extraction import facts_extract
from facts.reconciliation import facts_reconcile_apply, facts_reconcile_plan
from reflections.models import MemoryScope
from reflections.services.consolidation import ScopeKey, consolidation_due_scopes
from reflections.services.reflections import reflections_draft, reflections_store
from reflections.services.session_summary import session_summary_due

logger = logging.getLogger(__name__)
Status = Session.FormationStatus


@dataclass(frozen=True)
class FormationOutcome:
    job: FormationJob
    more_pending: bool


def _claim(*, session_id: int, trigger: str, task_id: str) -> tuple[Session, FormationJob] | None:
    """Take the session for this run. skip_locked: a session another worker is claiming right now is skipped,
    not waited for. A 'running' mark older than twice the task time limit belongs to a lost worker."""
    now = timezone.now()
    with transaction.atomic():
        session = (
            Session.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("agent", "user")
            .filter(pk=session_id)
            .first()
        )
        if session is None:
            return None
        stale_before = now - timedelta(seconds=2 * settings.CELERY_TASK_TIME_LIMIT)
        if session.formation_status == Status.RUNNING and (session.formation_queued_at or now) > stale_before:
            return None
        FormationJob.objects.filter(session=session, status=JobStatus.RUNNING).update(
            status=JobStatus.FAILED, finished_at=now, error="abandoned: the worker running it was lost"
        )
        session.formation_status, session.formation_queued_at = Status.RUNNING, now
        session.save(update_fields=["formation_status", "formation_queued_at"])
        job = FormationJob.objects.create(
            session=session, trigger=trigger, task_id=task_id, after_message_id=session.formed_through_message_id
        )
    return session, job


def formation_job_fail(*, job: FormationJob, error: BaseException, input_snapshot: dict, retrying: bool) -> None:
    """Record the failure with the input kept for replay. The cursor stays; a retrying run re-queues the session,
    otherwise the sweep tries it again later."""
    now = timezone.now()
    with transaction.atomic():
        job.status, job.finished_at = JobStatus.FAILED, now
        job.error = f"{type(error).__name__}: {error}"[:5000] + (" (will retry)" if retrying else "")
        job.input = input_snapshot
        job.save(update_fields=["status", "finished_at", "error", "input"])
        Session.objects.filter(pk=job.session_id).update(
            formation_status=Status.QUEUED if retrying else Status.FAILED, formation_queued_at=now
        )


def session_form_memories(
    *, session_id: int, trigger: str, task_id: str = "", may_retry: bool = False
) -> FormationOutcome | None:
    """One formation run. Returns None when there was nothing to claim. On failure the job is recorded as failed
    with its input, the session is left for a retry (may_retry, provider errors only) or for the sweep, and the
    error is raised again for the task to act on."""
    claimed = _claim(session_id=session_id, trigger=trigger, task_id=task_id)
    if claimed is None:
        return None
    session, job = claimed
    snapshot: dict = {"trigger": trigger}
    try:
        return _form(session=session, job=job, snapshot=snapshot)
    except (ProviderError, SoftTimeLimitExceeded) as error:
        formation_job_fail(job=job, error=error, input_snapshot=snapshot, retrying=may_retry)
        raise
    except Exception as error:
        formation_job_fail(job=job, error=error, input_snapshot=snapshot, retrying=False)
        raise


def _form(*, session: Session, job: FormationJob, snapshot: dict) -> FormationOutcome:
    pending = list(
        Message.objects.filter(session=session, id__gt=session.formed_through_message_id or 0).order_by("id")
    )
    if not pending:
        _finish(session=session, job=job, through=None, message_count=0)
        return FormationOutcome(job=job, more_pending=False)

    window = conversation_window(messages=pending, token_budget=settings.FORMATION_TOKEN_BUDGET)
    snapshot["messages"] = [item.as_input() | {"id": item.message.pk} for item in window]
    extracted = facts_extract(window=window, agent_id=session.agent_id, job_id=job.pk)
    decisions = facts_reconcile_plan(agent=session.agent, user=session.user, extracted=extracted, job_id=job.pk)
    new_fact_texts = [d.content or d.new.content for d in decisions if d.action in ("ADD", "UPDATE")]
    drafts = reflections_draft(window=window, session=session, new_facts=new_fact_texts, job_id=job.pk)

    through = window[-1].message.pk
    user_messages = [item.message for item in window if item.message.role == Message.Role.USER]
    with transaction.atomic():
        facts = facts_reconcile_apply(
            decisions=decisions, agent=session.agent, session=session, source_messages_fallback=user_messages
        )
        reflections = reflections_store(drafts=drafts, session=session)
        job.facts_added, job.facts_updated = len(facts.added), len(facts.updated)
        job.facts_deleted, job.facts_unchanged = len(facts.deleted), facts.unchanged
        job.reflections_added = len(reflections)
        _finish(session=session, job=job, through=through, message_count=len(window))
    more_pending = len(window) < len(pending)
    _queue_follow_ups(session=session, more_pending=more_pending)
    return FormationOutcome(job=job, more_pending=more_pending)


def _finish(*, session: Session, job: FormationJob, through: int | None, message_count: int) -> None:
    now = timezone.now()
    with transaction.atomic():
        locked = Session.objects.select_for_update().get(pk=session.pk)
        if through is not None and through > (locked.formed_through_message_id or 0):
            locked.formed_through_message_id = through
        locked.formation_status, locked.last_formed_at = Status.IDLE, now
        locked.save(update_fields=["formed_through_message_id", "formation_status", "last_formed_at"])
        job.status, job.finished_at = JobStatus.SUCCEEDED, now
        job.through_message_id, job.message_count = through, message_count
        job.save()
    session.formed_through_message_id = locked.formed_through_message_id
    session.formation_status = Status.IDLE


def _queue_follow_ups(*, session: Session, more_pending: bool) -> None:
    """Consolidate scopes whose buffer is due; form again when messages remain past this run's window or arrived
    meanwhile in numbers that make the interval due."""
    from conversations.tasks import scope_consolidate_task

    due = consolidation_due_scopes(session=session)
    session_key = ScopeKey(
        agent_id=session.agent_id, scope=MemoryScope.SESSION, user_id=session.user_id, session_id=session.pk
    )
    if session_key not in due and session_summary_due(session=session):
        due.append(session_key)
    for key in due:
        task_enqueue_safely(scope_consolidate_task, *key.as_task_args())
    # The counters too: messages appended while this run held the session decide whether the interval is due.
    session.refresh_from_db(fields=["formation_status", "formed_through_message_id", "message_count", "token_count"])
    if more_pending or session_formation_due_by_interval(session=session):
        formation_request(session=session, trigger="interval")
