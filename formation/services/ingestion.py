"""Ingestion as the interfaces see it: conversations stores the messages (conversations.services.ingestion), and in
the same transaction formation decides whether the session is due (formation.services.formation_triggers); the task
is enqueued after commit, so a request never waits for memory work. Closing a session queues formation of what it
has not formed yet."""

from __future__ import annotations

from django.db import transaction

from agents.models import Agent
from conversations.models import Session
from conversations.services.ingestion import AppendResult, MessageInput, session_append_messages, session_close
from formation.models import FormationJob
from formation.services.formation_triggers import formation_request, session_formation_due_by_interval


def session_messages_ingest(
    *, agent: Agent, user_external_id: str | None, session_external_id: str, messages: list[MessageInput]
) -> AppendResult:
    """Append the messages (idempotent per key, the session created on first use) and queue formation when the
    session's message or token interval is due."""
    with transaction.atomic():
        result = session_append_messages(
            agent=agent,
            user_external_id=user_external_id,
            session_external_id=session_external_id,
            messages=messages,
        )
        # Still under the session's row lock, which the append took: the counters read here are exact.
        if result.created_count and session_formation_due_by_interval(session=result.session):
            formation_request(session=result.session, trigger=FormationJob.Trigger.INTERVAL)
    return result


def session_close_and_form(*, session: Session) -> tuple[Session, bool]:
    """Close the session and queue formation of what it has not formed yet. Idempotent: an already closed session
    keeps its closed_at and queues nothing. Returns the session and whether this call closed it."""
    with transaction.atomic():
        session, closed_now = session_close(session=session)
        if closed_now:
            formation_request(session=session, trigger=FormationJob.Trigger.CLOSED)
    return session, closed_now
