"""Which sessions formation would work on: those with messages after their cursor, optionally only those due."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Exists, OuterRef, QuerySet
from django.db.models.functions import Coalesce

from agents.models import Agent, EndUser
from agents.selectors.agent_settings import agent_thresholds
from conversations.models import Message, Session
from formation.services.formation_triggers import session_formation_due_by_interval, session_unformed_totals


def sessions_with_unformed_messages(
    *, agent: Agent | None = None, user: EndUser | None = None, session: Session | None = None
) -> QuerySet[Session]:
    unformed = Message.objects.filter(session=OuterRef("pk"), id__gt=Coalesce(OuterRef("formed_through_message_id"), 0))
    sessions = Session.objects.filter(Exists(unformed)).select_related("agent", "user")
    if agent is not None:
        sessions = sessions.filter(agent=agent)
    if user is not None:
        sessions = sessions.filter(user=user)
    if session is not None:
        sessions = sessions.filter(pk=session.pk)
    return sessions.order_by("last_activity_at", "pk")


def session_formation_due(*, session: Session, now: datetime) -> bool:
    """Due as the triggers define it: by the message or token interval, or cold (idle long enough with enough
    unformed messages). A session already queued or running is not due: a worker has it."""
    if session.formation_status in (Session.FormationStatus.QUEUED, Session.FormationStatus.RUNNING):
        return False
    if session_formation_due_by_interval(session=session):
        return True
    thresholds = agent_thresholds(agent=session.agent)
    messages, _ = session_unformed_totals(session=session)
    idle_since = now - timedelta(minutes=thresholds.cold_after_minutes)
    return session.last_activity_at < idle_since and messages >= thresholds.min_messages_for_formation
