"""Ingestion: store messages fast, never wait for memory work. Whether formation is due is formation's to decide, in
the same transaction (formation.services.ingestion, what the interfaces call)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from agents.models import Agent, EndUser
from conversations.metrics import messages_ingested_count
from conversations.models import Message, Session
from conversations.services.message_embeddings import message_embedding_enqueue
from core.exceptions import ConflictError
from core.llm.tokens import count_tokens_batch

MAX_MESSAGES_PER_REQUEST = 500


@dataclass(frozen=True)
class MessageInput:
    role: str
    content: str
    created_at: datetime | None = None
    idempotency_key: str | None = None
    metadata: dict = field(default_factory=dict)


@dataclass(frozen=True)
class AppendResult:
    session: Session
    messages: list[Message]
    created_count: int


def end_user_get_or_create(*, agent: Agent, external_id: str) -> EndUser:
    # get_or_create inserts in its own savepoint and reads the row again when a concurrent request created it first.
    user, _ = EndUser.objects.get_or_create(agent=agent, external_id=external_id)
    return user


def session_get_or_create(*, agent: Agent, user_external_id: str | None, session_external_id: str) -> Session:
    """The agent's session with that external id, created for the user on first use. A session belongs to one
    user: naming another user for an existing session is a conflict, not a silent move."""
    session, _ = _session_get_or_create(
        agent=agent, user_external_id=user_external_id, session_external_id=session_external_id, lock=False
    )
    return session


def _session_get_or_create(
    *, agent: Agent, user_external_id: str | None, session_external_id: str, lock: bool
) -> tuple[Session, bool]:
    """The session and whether it was created. With lock, an existing session is read with its row lock (and its
    user's, which erasure takes too); a created one is invisible to other transactions until commit."""
    sessions = Session.objects.select_related("agent", "user").filter(agent=agent, external_id=session_external_id)
    if lock:
        # NO KEY UPDATE: serialises appends and formation's claim on the session, yet does not block inserts that
        # only reference the row (message embeddings, formation jobs). The agent row is not locked: one agent's
        # sessions are appended to concurrently.
        sessions = sessions.select_for_update(of=("self", "user"), no_key=True)
    session = sessions.first()
    if session is not None:
        if user_external_id is not None and session.user.external_id != user_external_id:
            raise ConflictError(
                f"session {session_external_id!r} belongs to another user.", fields={"user": ["does not match"]}
            )
        return session, False
    if not user_external_id:
        raise ConflictError(
            f"session {session_external_id!r} does not exist yet; name its user to create it.",
            fields={"user": ["required to create a session"]},
            code="invalid",
        )
    user = end_user_get_or_create(agent=agent, external_id=user_external_id)
    try:
        with transaction.atomic():
            return Session.objects.create(agent=agent, user=user, external_id=session_external_id), True
    except IntegrityError:  # a concurrent request created it first
        return _session_get_or_create(
            agent=agent, user_external_id=user_external_id, session_external_id=session_external_id, lock=lock
        )


def session_append_messages(
    *, agent: Agent, user_external_id: str | None, session_external_id: str, messages: list[MessageInput]
) -> AppendResult:
    """Store messages in order. A message whose idempotency key the session already holds is not stored again:
    the stored one is returned in its place, so a client retry is harmless."""
    # Counted before the transaction: tokenizing is the costliest step, and the session's row lock need not wait
    # for it (a retried message is counted for nothing, which is rare).
    token_counts = count_tokens_batch([message.content for message in messages])
    with transaction.atomic():
        return _messages_store(
            agent=agent,
            user_external_id=user_external_id,
            session_external_id=session_external_id,
            messages=messages,
            token_counts=token_counts,
        )


def _messages_store(
    *,
    agent: Agent,
    user_external_id: str | None,
    session_external_id: str,
    messages: list[MessageInput],
    token_counts: list[int],
) -> AppendResult:
    # The row lock serialises concurrent appends to one session: counters and idempotency checks stay exact.
    session, created_now = _session_get_or_create(
        agent=agent, user_external_id=user_external_id, session_external_id=session_external_id, lock=True
    )
    keys = [message.idempotency_key for message in messages if message.idempotency_key]
    by_key = (
        {m.idempotency_key: m for m in Message.objects.filter(session=session, idempotency_key__in=keys)}
        if keys and not created_now  # a session created by this transaction holds no messages yet
        else {}
    )
    first_with_key: dict[str, MessageInput] = {}
    new_inputs: list[tuple[MessageInput, int]] = []
    for index, (message, tokens) in enumerate(zip(messages, token_counts, strict=True)):
        key = message.idempotency_key
        if key:
            earlier = by_key.get(key) or first_with_key.get(key)
            if earlier is not None:
                _idempotent_retry_check(earlier=earlier, retry=message, index=index)
                continue  # already stored, or repeated within this batch
            first_with_key[key] = message
        new_inputs.append((message, tokens))

    now = timezone.now()
    created = _messages_insert(session=session, inputs=new_inputs, now=now)
    by_key.update({message.idempotency_key: message for message in created if message.idempotency_key})
    unkeyed = iter([message for message in created if not message.idempotency_key])
    ordered = [by_key[m.idempotency_key] if m.idempotency_key else next(unkeyed) for m in messages]

    if created:
        session.message_count += len(created)
        session.token_count += sum(tokens for _, tokens in new_inputs)
        session.last_activity_at = now
        session.closed_at = None
        session.save(update_fields=["message_count", "token_count", "last_activity_at", "closed_at"])
        messages_ingested_count(roles=[message.role for message in created])
        message_embedding_enqueue(message_ids=[message.pk for message in created])
    return AppendResult(session=session, messages=ordered, created_count=len(created))


def _messages_insert(*, session: Session, inputs: list[tuple[MessageInput, int]], now: datetime) -> list[Message]:
    """One INSERT of the messages with their token counts; what appends and imports store alike."""
    return Message.objects.bulk_create(
        [
            Message(
                session=session,
                role=message.role,
                content=message.content,
                token_count=tokens,
                created_at=message.created_at or now,
                idempotency_key=message.idempotency_key or None,
                metadata=message.metadata or {},
            )
            for message, tokens in inputs
        ]
    )


def session_messages_import(*, session: Session, messages: list[MessageInput], new_session: bool) -> list[Message]:
    """Store messages said before (an import) as appends store them (token counts, counters, idempotency keys), with
    two differences: the activity clock follows when they were said (old history does not make a session recent),
    and no formation is queued (whether they count as formed is formation's: formation.services.formation_cursor).
    The caller holds the session's row lock and has left out messages it already stored."""
    if not messages:
        return []
    token_counts = count_tokens_batch([message.content for message in messages])
    created = _messages_insert(
        session=session, inputs=list(zip(messages, token_counts, strict=True)), now=timezone.now()
    )
    said_at = [message.created_at for message in created]
    session.message_count += len(created)
    session.token_count += sum(token_counts)
    session.last_activity_at = max(said_at) if new_session else max(session.last_activity_at, *said_at)
    if new_session:
        session.started_at = min(said_at)
    session.save(update_fields=["message_count", "token_count", "last_activity_at", "started_at"])
    return created


def _idempotent_retry_check(*, earlier: Message | MessageInput, retry: MessageInput, index: int) -> None:
    """A key names one message: a retry must say the same (role, content, metadata; created_at may differ, a client
    stamping each attempt with its own clock still retries safely). Another message under the key is a client bug
    that silently losing the new text would hide."""
    if (earlier.role, earlier.content, earlier.metadata or {}) == (retry.role, retry.content, retry.metadata or {}):
        return
    key = retry.idempotency_key
    raise ConflictError(
        f"idempotency key {key!r} was already used for a different message in this session; use a new key for a "
        "new message.",
        fields={f"messages.{index}.idempotency_key": [f"{key!r} names another message (role, content or metadata)."]},
        code="idempotency_conflict",
    )


@transaction.atomic
def session_close(*, session: Session) -> tuple[Session, bool]:
    """Mark the session closed. Idempotent: an already closed session keeps its closed_at. Returns the session and
    whether this call closed it."""
    session = Session.objects.select_for_update().get(pk=session.pk)
    if session.closed_at is not None:
        return session, False
    session.closed_at = timezone.now()
    session.save(update_fields=["closed_at"])
    return session, True
