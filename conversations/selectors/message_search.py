"""Turn-level retrieval: past messages similar to a prompt, by cosine similarity in the active embedding space."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from django.conf import settings
from pgvector.django import CosineDistance

from conversations.models import Agent, EndUser, Message, MessageEmbedding, Session
from core.embeddings.spaces import embedding_expression, embedding_provider_for_space, embedding_space_active


@dataclass(frozen=True)
class MessageHit:
    message: Message
    similarity: float
    session_external_id: str


def messages_search_similar(
    *,
    agent: Agent,
    user: EndUser | None,
    session: Session | None,
    query: str,
    top_k: int = 5,
    min_similarity: float | None = None,
    exclude_message_ids: Collection[int] = (),
) -> list[MessageHit]:
    """Within the session; across all of the user's sessions while the session is young (fewer than
    MESSAGE_SEARCH_WIDEN_BELOW_MESSAGES messages), when the session alone holds too little to recall from. Without a
    session, the user's sessions; without a user either, nothing (messages are never shared across users).

    The filter is on the embedding rows' own user column, so PostgreSQL reads one user's vectors through the
    (space, user) index and scans them exactly, rather than searching the agent-wide HNSW graph."""
    if user is None or top_k <= 0 or not query.strip():
        return []
    space = embedding_space_active()
    vector = embedding_provider_for_space(space=space).embed_one(query)
    candidates = MessageEmbedding.objects.filter(space=space, agent=agent, user=user)
    if session is not None and session.message_count >= settings.MESSAGE_SEARCH_WIDEN_BELOW_MESSAGES:
        candidates = candidates.filter(session=session)
    if exclude_message_ids:
        candidates = candidates.exclude(message_id__in=list(exclude_message_ids))
    candidates = candidates.annotate(distance=CosineDistance(embedding_expression(space=space), vector))
    if min_similarity is not None:
        candidates = candidates.filter(distance__lte=1 - min_similarity)
    rows = candidates.select_related("message", "session").order_by("distance")[:top_k]
    return [
        MessageHit(message=row.message, similarity=1 - row.distance, session_external_id=row.session.external_id)
        for row in rows
    ]
