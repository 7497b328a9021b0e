"""When formation runs: message/token intervals at ingestion, cold sessions and a sweep of missed work (beat),
explicit requests. Enqueueing happens after commit and never fails a request: a lost enqueue (Redis down) leaves
the session 'queued', and the sweep enqueues it again."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Count, IntegerField, OuterRef, Q, Subquery, Sum, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from agents.selectors.agent_settings import agent_thresholds
from conversations.models import Message, Session
from core.runtime.queueing import task_enqueue_safely
from formation import task_names as formation_tasks

logger = logging.getLogger(__name__)

Status = Session.FormationStatus
# How long a 'queued' session may wait before the sweep assumes its task was lost, and how long after a failure
# the sweep tries a session again.
QUEUED_GRACE = timedelta(minutes=10)
FAILED_RETRY_AFTER = timedelta(minutes=10)


def session_unformed_totals(*, session: Session) -> tuple[int, int]:
    """Messages and tokens after the formation cursor."""
    totals = Message.objects.filter(session=session, id__gt=session.formed_through_message_id or 0).aggregate(
        messages=Count("id"), tokens=Coalesce(Sum("token_count"), 0)
    )
    return totals["messages"], totals["tokens"]


# A session in these states has formation coming: a running one checks for newer messages when it finishes, a waiting
# one forms everything after its cursor when it resumes.
FORMATION_PENDING = (Status.QUEUED, Status.RUNNING, Status.WAITING)


def session_formation_due_by_interval(*, session: Session) -> bool:
    if session.formation_status in FORMATION_PENDING:
        return False
    thresholds = agent_thresholds(agent=session.agent)
    # The session's counters only grow and cover every message it ever held: when they are below both intervals,
    # the messages after the cursor are too, and the count query (one per append) is not needed.
    if (
        session.message_count < thresholds.formation_msg_interval
        and session.token_count < thresholds.formation_token_interval
    ):
        return False
    messages, tokens = session_unformed_totals(session=session)
    return messages >= thresholds.formation_msg_interval or tokens >= thresholds.formation_token_interval


def formation_request(*, session: Session, trigger: str) -> bool:
    """Queue formation of the session unless it is already queued, running or waiting (FORMATION_PENDING). Returns
    whether a task was queued."""
    updated = Session.objects.filter(pk=session.pk).exclude(formation_status__in=FORMATION_PENDING)
    if not updated.update(formation_status=Status.QUEUED, formation_queued_at=timezone.now()):
        return False
    session.formation_status = Status.QUEUED
    transaction.on_commit(lambda: task_enqueue_safely(formation_tasks.FORM_SESSION_MEMORIES, session.pk, trigger))
    return True


def sessions_formation_sweep(*, now: datetime | None = None, limit: int = 500) -> dict[str, int]:
    """The beat job: queue cold sessions with enough unformed messages, failed ones after a pause, and sessions
    whose queued or running formation was lost (broker down, worker killed)."""
    now = now or timezone.now()
    unformed = (
        Message.objects.filter(session=OuterRef("pk"), id__gt=Coalesce(OuterRef("formed_through_message_id"), 0))
        .order_by()
        .values("session")
        .annotate(n=Count("id"))
        .values("n")
    )
    candidates = (
        Session.objects.select_related("agent")
        .filter(
            Q(formation_status=Status.IDLE)
            | Q(formation_status=Status.FAILED, formation_queued_at__lt=now - FAILED_RETRY_AFTER)
            | Q(formation_status=Status.QUEUED, formation_queued_at__lt=now - QUEUED_GRACE)
            | Q(
                formation_status=Status.RUNNING,
                formation_queued_at__lt=now - timedelta(seconds=2 * settings.CELERY_TASK_TIME_LIMIT),
            )
        )
        .filter(last_activity_at__lt=now - timedelta(minutes=1))
        .annotate(unformed=Coalesce(Subquery(unformed, output_field=IntegerField()), Value(0)))
        .filter(unformed__gt=0)
        .order_by("last_activity_at")[:limit]
    )
    counts = {"cold": 0, "retried": 0}
    for session in candidates:
        thresholds = agent_thresholds(agent=session.agent)
        if session.formation_status in (Status.QUEUED, Status.RUNNING):
            # Compare-and-set: a worker that claimed the session since it was read keeps it.
            reset = Session.objects.filter(
                pk=session.pk,
                formation_status=session.formation_status,
                formation_queued_at=session.formation_queued_at,
            ).update(formation_status=Status.IDLE)
            session.formation_status = Status.IDLE
            if reset and formation_request(session=session, trigger="sweep"):
                counts["retried"] += 1
            continue
        if session.formation_status == Status.FAILED:
            # Already asked to form (and past the pause): retried whatever its size, cold or not.
            if formation_request(session=session, trigger="sweep"):
                counts["retried"] += 1
            continue
        cold = session.last_activity_at < now - timedelta(minutes=thresholds.cold_after_minutes)
        if (
            cold
            and session.unformed >= thresholds.min_messages_for_formation
            and formation_request(session=session, trigger="cold")
        ):
            counts["cold"] += 1
    return counts
