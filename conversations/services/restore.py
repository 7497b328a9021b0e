"""Users, sessions and messages of a native export written back as they were exported (portability's lossless
import), the caller having remapped their ids. Nothing is formed, queued or counted twice: the rows are history."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.db.models import F

from agents.models import EndUser
from conversations.models import Message, Session
from core.runtime.db import automatic_times_restore


def end_user_restore(*, user: EndUser, times: dict[str, datetime]) -> EndUser:
    user.save()
    automatic_times_restore(objs=[user], times=[times])
    return user


def session_restore(*, session: Session) -> Session:
    session.save()
    return session


def messages_restore(*, messages: Sequence[Message], times: Sequence[dict[str, datetime]]) -> list[Message]:
    created = Message.objects.bulk_create(messages)
    automatic_times_restore(objs=created, times=times)
    return created


def session_counters_add(*, session_id: int, messages: int, tokens: int) -> None:
    """Messages added to a session that existed before the import: increments, so that an append meanwhile keeps its
    own."""
    Session.objects.filter(pk=session_id).update(
        message_count=F("message_count") + messages, token_count=F("token_count") + tokens
    )
