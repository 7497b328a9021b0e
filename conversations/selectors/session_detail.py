"""Reads behind the admin's session page: its messages in order (its formation jobs: formation.selectors.jobs)."""

from __future__ import annotations

from django.db.models import QuerySet

from conversations.models import Message, Session


def session_messages(*, session: Session) -> QuerySet[Message]:
    """In the order they were stored (the formation cursor's order)."""
    return (
        Message.objects.filter(session=session)
        .order_by("id")
        .only("id", "session_id", "role", "content", "token_count", "created_at")
    )
