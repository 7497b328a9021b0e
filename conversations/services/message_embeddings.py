"""Message vectors for turn-level retrieval, written by a background task after ingestion (never in the request)."""

from __future__ import annotations

from collections.abc import Iterable

from conversations.models import Message, MessageEmbedding
from core.embeddings.spaces import embedding_provider_for_space, embedding_space_active
from core.models import EmbeddingSpace


def message_embedding_text(*, message: Message) -> str:
    return message.content


def messages_embed_missing(*, message_ids: Iterable[int], space: EmbeddingSpace | None = None) -> int:
    """Embed those of the given messages that have no vector in the space yet; idempotent. Returns how many."""
    space = space or embedding_space_active()
    messages = list(
        Message.objects.filter(pk__in=list(message_ids))
        .exclude(embeddings__space=space)
        .select_related("session")
        .order_by("pk")
    )
    if not messages:
        return 0
    vectors = embedding_provider_for_space(space=space).embed([message_embedding_text(message=m) for m in messages])
    MessageEmbedding.objects.bulk_create(
        [
            MessageEmbedding(
                message=message,
                space=space,
                agent_id=message.session.agent_id,
                user_id=message.session.user_id,
                session_id=message.session_id,
                embedding=vector,
            )
            for message, vector in zip(messages, vectors, strict=True)
        ],
        ignore_conflicts=True,
    )
    return len(messages)
