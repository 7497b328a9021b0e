"""Memory formation for one session: claim, read the messages after the cursor, extract facts, reconcile them,
draft reflections, then store everything and move the cursor in one transaction. A run that fails stores
nothing and leaves the cursor where it was, so the next run covers the same messages; a run repeated after
success finds nothing after the cursor."""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.db.models import BigIntegerField, Value
from django.db.models.functions import Greatest
from django.utils import timezone

from agents.selectors.llm_holds import LLMHold, llm_hold, provider_hold
from conversations.models import Message, Session
from conversations.services.conversation_text import conversation_window
from core.exceptions import ProviderError, ProviderPaused
from core.llm.client import llm_calls_write, llm_job_calls
from core.models import JobStatus, LLMCall
from core.runtime.queueing import task_enqueue_safely
from core.runtime.request_load import cpu_work_admitted
from facts.services.extraction import facts_extract
from facts.services.reconciliation import facts_reconcile_apply, facts_reconcile_plan
from formation.metrics import formation_job_count
from formation.models import FormationJob
from formation.services.formation_holds import session_formation_wait
from formation.services.formation_triggers import formation_request, session_formation_due_by_interval
from formation.services.memory_trust import (
    facts_from_user_route,
    held_memories_store,
    reflections_from_user_route,
)
from reflections import task_names as reflections_tasks
from reflections.models import MemoryScope
from reflections.services.consolidation import ScopeKey, consolidation_due_scopes
from reflections.services.reflections import reflections_draft, reflections_store
from reflections.services.session_summary import session_summary_due
from webhooks.models import WebhookEventType
from webhooks.services.events import webhook_event_record

logger = logging.getLogger(__name__)
Status = Session.FormationStatus


class SessionLocked(Exception):
    """The session's row is locked by another transaction (most often an append in flight): the claim must be tried
    again in a moment, or the session would stay queued with no task until the sweep's grace period."""


@dataclass(frozen=True)
class FormationOutcome:
    job: FormationJob
    more_pending: bool


def _claim(*, session_id: int, trigger: str, task_id: str) -> tuple[Session, FormationJob] | None:
    """Take the session for this run in one transaction: mark it running, fail the job of a lost worker, insert this
    run's job, and read the session with its agent and user. SKIP LOCKED: a row another transaction holds (an append
    in flight) is not waited for; SessionLocked tells the task to come back. A 'running' mark younger than twice the
    task time limit belongs to a live worker: None (that run checks for newer messages when it finishes)."""
    now = timezone.now()
    stale_before = now - timedelta(seconds=2 * settings.CELERY_TASK_TIME_LIMIT)
    with transaction.atomic():
        # NO KEY UPDATE, of the session's row alone, as appends take it: the agent and the user stay unlocked.
        session = (
            Session.objects.select_related("agent", "user")
            .select_for_update(no_key=True, skip_locked=True, of=("self",))
            .filter(pk=session_id)
            .first()
        )
        if session is None:
            if Session.objects.filter(pk=session_id).exists():
                raise SessionLocked(f"session {session_id} is locked by another transaction")
            return None
        if session.formation_status == Status.RUNNING and (session.formation_queued_at or now) > stale_before:
            return None
        FormationJob.objects.filter(session=session, status=JobStatus.RUNNING).update(
            status=JobStatus.FAILED, finished_at=now, error="abandoned: the worker running it was lost"
        )
        session.formation_status, session.formation_queued_at = Status.RUNNING, now
        session.formation_waiting_reason = ""
        session.save(update_fields=["formation_status", "formation_queued_at", "formation_waiting_reason"])
        job = FormationJob.objects.create(
            session=session,
            trigger=trigger,
            status=JobStatus.RUNNING,
            task_id=task_id,
            started_at=now,
            after_message_id=session.formed_through_message_id,
        )
    return session, job


def formation_job_fail(
    *, job: FormationJob, error: BaseException, input_snapshot: dict, retrying: bool, calls: list[LLMCall]
) -> None:
    """Record the failure with the input kept for replay, and the LLM calls the run made. The cursor stays; a
    retrying run re-queues the session, otherwise the sweep tries it again later."""
    now = timezone.now()
    with transaction.atomic():
        job.status, job.finished_at = JobStatus.FAILED, now
        job.error = f"{type(error).__name__}: {error}"[:5000] + (" (will retry)" if retrying else "")
        job.input = input_snapshot
        if not FormationJob.objects.filter(pk=job.pk).exists():
            return  # the session went with its user's erasure: nothing to record
        job.save(update_fields=["status", "finished_at", "error", "input"])
        llm_calls_write(records=calls)
        _job_count(job=job, outcome="retrying" if retrying else "failed", finished_at=now)
        Session.objects.filter(pk=job.session_id).update(
            formation_status=Status.QUEUED if retrying else Status.FAILED, formation_queued_at=now
        )
        formation_event_record(session=job.session, job=job, event_type=WebhookEventType.FORMATION_FAILED)


def _formation_pause(*, job: FormationJob, hold: LLMHold, input_snapshot: dict, calls: list[LLMCall]) -> None:
    """The provider's breaker opened while this run was under way: the job is failed with its input and calls, and
    the session waits for the provider rather than counting a retry."""
    with transaction.atomic():
        job.status, job.finished_at = JobStatus.FAILED, timezone.now()
        job.error, job.input = f"paused: {hold.detail}"[:5000], input_snapshot
        job.save(update_fields=["status", "finished_at", "error", "input"])
        llm_calls_write(records=calls)
        _job_count(job=job, outcome="paused", finished_at=job.finished_at)
        session_formation_wait(session_id=job.session_id, hold=hold)


def session_form_memories(
    *, session_id: int, trigger: str, task_id: str = "", may_retry: bool = False
) -> FormationOutcome | None:
    """One formation run. Returns None when there was nothing to claim, or when formation must wait (budget spent,
    provider failing: the session is 'waiting' with the reason). On failure the job is recorded as failed with its
    input, the session is left for a retry (may_retry, provider errors only) or for the sweep, and the error is
    raised again for the task to act on. Raises SessionLocked when the session's row is locked. Its CPU work gives
    way to requests (core.runtime.request_load); its LLM calls hold no slot."""
    with cpu_work_admitted():
        return _session_form(session_id=session_id, trigger=trigger, task_id=task_id, may_retry=may_retry)


def _session_form(*, session_id: int, trigger: str, task_id: str, may_retry: bool) -> FormationOutcome | None:
    claimed = _claim(session_id=session_id, trigger=trigger, task_id=task_id)
    if claimed is None:
        return None
    session, job = claimed
    hold = llm_hold(agent=session.agent)
    if hold is not None:
        with transaction.atomic():
            FormationJob.objects.filter(pk=job.pk).delete()  # nothing was done: the wait is the session's status
            session_formation_wait(session_id=session.pk, hold=hold)
        return None
    snapshot: dict = {"trigger": trigger}
    with llm_job_calls(time_limit_seconds=settings.CELERY_TASK_SOFT_TIME_LIMIT) as calls:
        try:
            return _form(session=session, job=job, snapshot=snapshot, calls=calls)
        except ProviderPaused as error:
            held = provider_hold() or LLMHold(Session.WaitingReason.PROVIDER, str(error))
            _formation_pause(job=job, hold=held, input_snapshot=snapshot, calls=calls)
            return None
        except (ProviderError, SoftTimeLimitExceeded) as error:
            formation_job_fail(job=job, error=error, input_snapshot=snapshot, retrying=may_retry, calls=calls)
            raise
        except Exception as error:
            formation_job_fail(job=job, error=error, input_snapshot=snapshot, retrying=False, calls=calls)
            raise


def _form(*, session: Session, job: FormationJob, snapshot: dict, calls: list[LLMCall]) -> FormationOutcome | None:
    pending = list(
        Message.objects.filter(session=session, id__gt=session.formed_through_message_id or 0).order_by("id")
    )
    if not pending:
        with transaction.atomic():
            _session_finish(session=session, through=None)
            _job_finish(job=job, through=None, message_count=0)
        return FormationOutcome(job=job, more_pending=False)

    window = conversation_window(messages=pending, token_budget=settings.FORMATION_TOKEN_BUDGET)
    snapshot["messages"] = [item.as_input() | {"id": item.message.pk} for item in window]
    extracted = facts_extract(window=window, agent=session.agent, job_id=job.pk)
    trusted_facts = facts_from_user_route(agent=session.agent, extracted=extracted)
    decisions = facts_reconcile_plan(
        agent=session.agent, user=session.user, extracted=trusted_facts.facts, job_id=job.pk
    )
    new_fact_texts = [d.content or d.new.content for d in decisions if d.action in ("ADD", "UPDATE")]
    drafts = reflections_draft(window=window, session=session, new_facts=new_fact_texts, job_id=job.pk)
    user_messages = [item.message for item in window if item.message.role == Message.Role.USER]
    trusted_reflections = reflections_from_user_route(agent=session.agent, drafts=drafts, source_messages=user_messages)

    through = window[-1].message.pk
    with transaction.atomic():
        if not _session_finish(session=session, through=through):
            return None  # its user was erased meanwhile: nothing of theirs is stored
        facts = facts_reconcile_apply(
            decisions=decisions, agent=session.agent, session=session, source_messages_fallback=user_messages
        )
        reflections = reflections_store(drafts=trusted_reflections.drafts, session=session)
        held_memories_store(
            agent=session.agent,
            user=session.user,
            session=session,
            held=trusted_facts.held + trusted_reflections.held,
            origin="formation",
        )
        job.facts_added, job.facts_updated = len(facts.added), len(facts.updated) + len(facts.ended)
        job.facts_deleted, job.facts_unchanged = len(facts.deleted), facts.unchanged
        job.reflections_added = len(reflections)
        llm_calls_write(records=calls)
        _job_finish(job=job, through=through, message_count=len(window))
        formation_event_record(session=session, job=job, event_type=WebhookEventType.FORMATION_COMPLETED)
    more_pending = len(window) < len(pending)
    _queue_follow_ups(session=session, more_pending=more_pending)
    return FormationOutcome(job=job, more_pending=more_pending)


def formation_event_data(session: Session, job: FormationJob) -> dict:
    """A formation run as webhooks report it: the session and what the run wrote, or why it failed."""
    job_data: dict[str, object] = {
        "id": job.pk,
        "trigger": job.trigger,
        "status": job.status,
        "message_count": job.message_count,
        "through_message_id": job.through_message_id,
        "facts_added": job.facts_added,
        "facts_updated": job.facts_updated,
        "facts_deleted": job.facts_deleted,
        "reflections_added": job.reflections_added,
    }
    if job.status == JobStatus.FAILED:
        job_data |= {"error": job.error[:500], "will_retry": job.error.endswith("(will retry)")}
    return {
        "agent": session.agent.external_id,
        "user": session.user.external_id,
        "session": session.external_id,
        "job": job_data,
    }


def formation_event_record(*, session: Session, job: FormationJob, event_type: str) -> None:
    webhook_event_record(
        agent_id=session.agent_id,
        event_type=event_type,
        data=functools.partial(formation_event_data, session, job),
        user_id=session.user_id,
    )


def _session_finish(*, session: Session, through: int | None) -> bool:
    """Move the cursor (never backwards) and mark the session idle, reading the session's counters as appends
    meanwhile left them (for the follow-up check); False when the session is gone (deleted, or its user erased).
    Inside the run's final transaction, whose first lock is the session's row: appends and erasure lock the session
    before the user and the facts, and so does this transaction, so none of them can deadlock with it."""
    now = timezone.now()
    row = Session.objects.filter(pk=session.pk)
    updated = row.update(  # PostgreSQL's GREATEST ignores NULLs: a first run sets the cursor, a run of nothing keeps it
        formed_through_message_id=Greatest("formed_through_message_id", Value(through, output_field=BigIntegerField())),
        formation_status=Status.IDLE,
        formation_waiting_reason="",
        last_formed_at=now,
    )
    if not updated:
        return False  # the session was deleted (its user erased) while the run talked to the LLM
    session.formed_through_message_id, session.message_count, session.token_count = row.values_list(
        "formed_through_message_id", "message_count", "token_count"
    ).get()
    session.formation_status, session.last_formed_at = Status.IDLE, now
    return True


def _job_finish(*, job: FormationJob, through: int | None, message_count: int) -> None:
    job.status, job.finished_at = JobStatus.SUCCEEDED, timezone.now()
    _job_count(job=job, outcome="succeeded", finished_at=job.finished_at)
    job.through_message_id, job.message_count = through, message_count
    job.save(
        update_fields=[
            "status",
            "finished_at",
            "through_message_id",
            "message_count",
            "facts_added",
            "facts_updated",
            "facts_deleted",
            "facts_unchanged",
            "reflections_added",
        ]
    )


def _job_count(*, job: FormationJob, outcome: str, finished_at: datetime) -> None:
    formation_job_count(trigger=job.trigger, outcome=outcome, seconds=(finished_at - job.started_at).total_seconds())


def _queue_follow_ups(*, session: Session, more_pending: bool) -> None:
    """Consolidate scopes whose buffer is due; form again when messages remain past this run's window or arrived
    meanwhile in numbers that make the interval due."""
    due = consolidation_due_scopes(session=session)
    session_key = ScopeKey(
        agent_id=session.agent_id, scope=MemoryScope.SESSION, user_id=session.user_id, session_id=session.pk
    )
    if session_key not in due and session_summary_due(session=session):
        due.append(session_key)
    for key in due:
        task_enqueue_safely(reflections_tasks.CONSOLIDATE_SCOPE, *key.as_task_args())
    # The counters as _session_finish read them (as at commit): messages appended during this run count too.
    if more_pending or session_formation_due_by_interval(session=session):
        formation_request(session=session, trigger="interval")
