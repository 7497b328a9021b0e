"""Message vectors for turn-level retrieval, written by a background task after ingestion (never in the request)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from django.db import transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from conversations import task_names as conversations_tasks
from conversations.models import Message, MessageEmbedding
from core.embeddings.spaces import embedding_provider_for_space, embedding_space_active
from core.models import EmbeddingSpace
from core.runtime.queueing import task_enqueue_safely
from core.search.time_expressions import referred_date


def message_embedding_enqueue(*, message_ids: list[int]) -> None:
    transaction.on_commit(lambda: task_enqueue_safely(conversations_tasks.EMBED_MESSAGES, message_ids))


def speaker_name(*, role: str, metadata: dict | None) -> str:
    """Who said a message: the speaker's name when the client gave one (metadata `speaker` or `name`), else the
    role."""
    metadata = metadata or {}
    return str(metadata.get("speaker") or metadata.get("name") or role)


def message_speaker(*, message: Message) -> str:
    return speaker_name(role=message.role, metadata=message.metadata)


def message_search_text(*, message: Message, previous: Message | None) -> str:
    """What turn-level retrieval indexes for a message, embedded and full-text searched alike: the message with who
    said it, after the message before it in its session. A reply ("Yes, last Tuesday!") carries little on its own;
    with the turn it answers and the speakers' names, a question about it finds it (LoCoMo dev split: recall@10
    27.9 for the bare turn, 43.4 with the speaker, 53.2 with the previous turn too; docs/benchmarks/history.md). The
    text is stored with the vector (MessageEmbedding.search_text), and full-text search reads its stored tsvector."""
    text = f"{message_speaker(message=message)}: {message.content}"
    if previous is None:
        return text
    return f"{message_speaker(message=previous)}: {previous.content}\n{text}"


def messages_with_previous(*, messages: list[Message]) -> list[tuple[Message, Message | None]]:
    """Each message with the one before it in its session (None for a session's first)."""
    previous_ids = dict(
        Message.objects.filter(pk__in=[m.pk for m in messages])
        .annotate(
            previous_id=Subquery(
                Message.objects.filter(session_id=OuterRef("session_id"), pk__lt=OuterRef("pk"))
                .order_by("-pk")
                .values("pk")[:1]
            )
        )
        .values_list("pk", "previous_id")
    )
    previous = Message.objects.in_bulk([pk for pk in previous_ids.values() if pk])
    return [(message, previous.get(previous_ids.get(message.pk))) for message in messages]


def messages_embed_missing(*, message_ids: Iterable[int], space: EmbeddingSpace | None = None) -> int:
    """Embed those of the given messages that have no vector in the space yet, with the day each one's text names
    (core.search.time_expressions: "yesterday" said on 8 May is 7 May), for time-aware search; idempotent. Returns how
    many."""
    space = space or embedding_space_active()
    messages = list(
        Message.objects.filter(pk__in=list(message_ids))
        .exclude(embeddings__space=space)
        .select_related("session")
        .order_by("pk")
    )
    if not messages:
        return 0
    texts = [message_search_text(message=m, previous=p) for m, p in messages_with_previous(messages=messages)]
    vectors = embedding_provider_for_space(space=space).embed(texts)
    MessageEmbedding.objects.bulk_create(
        [
            MessageEmbedding(
                message=message,
                space=space,
                agent_id=message.session.agent_id,
                user_id=message.session.user_id,
                session_id=message.session_id,
                embedding=vector,
                search_text=text,
                refers_to=referred_date(text=message.content, said_at=message.created_at),
            )
            for message, vector, text in zip(messages, vectors, texts, strict=True)
        ],
        ignore_conflicts=True,
    )
    return len(messages)


def messages_embedding_sweep(
    *, within: timedelta = timedelta(days=1), grace: timedelta = timedelta(minutes=2), limit: int = 2000
) -> int:
    """Queue embedding of recent messages that have no vector in the active space: their task was lost (broker
    down at ingestion). Messages younger than `grace` are left to the task still queued for them.
    Returns how many were queued."""
    space = embedding_space_active()
    missing = list(
        Message.objects.filter(stored_at__gte=timezone.now() - within, stored_at__lt=timezone.now() - grace)
        .exclude(embeddings__space=space)
        .order_by("id")
        .values_list("id", flat=True)[:limit]
    )
    for start in range(0, len(missing), 500):
        task_enqueue_safely(conversations_tasks.EMBED_MESSAGES, missing[start : start + 500])
    return len(missing)


def message_referred_dates_backfill(*, after_id: int, limit: int) -> tuple[int, int | None]:
    """The day each message's text names (refers_to), for message vectors written before it was kept: one batch of
    vectors with none, in id order after `after_id`. Returns how many got a day and the last id read (None when
    there is nothing after it). Idempotent: a text that names no day stays without one."""
    rows = list(
        MessageEmbedding.objects.filter(pk__gt=after_id, refers_to__isnull=True)
        .select_related("message")
        .only("pk", "refers_to", "message__content", "message__created_at")
        .order_by("pk")[:limit]
    )
    dated = []
    for row in rows:
        row.refers_to = referred_date(text=row.message.content, said_at=row.message.created_at)
        if row.refers_to is not None:
            dated.append(row)
    MessageEmbedding.objects.bulk_update(dated, ["refers_to"])
    return len(dated), rows[-1].pk if rows else None
