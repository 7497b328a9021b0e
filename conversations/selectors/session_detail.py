"""Reads behind the admin's session page: its messages in order, its formation jobs."""

from __future__ import annotations

from django.db.models import QuerySet

from conversations.models import FormationJob, Message, Session


def session_messages(*, session: Session) -> QuerySet[Message]:
    """In the order they were stored (the formation cursor's order)."""
    return (
        Message.objects.filter(session=session)
        .order_by("id")
        .only("id", "session_id", "role", "content", "token_count", "created_at")
    )


def session_formation_jobs_recent(*, session: Session, limit: int = 20) -> list[FormationJob]:
    return list(FormationJob.objects.filter(session=session).defer("input").order_by("-started_at")[:limit])
