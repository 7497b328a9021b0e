"""Writes to facts. Every fact version is embedded in the active embedding space when it is written."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from datetime import datetime

import numpy as np
from django.db import transaction
from django.utils import timezone

from conversations.models import Agent, EndUser, Message, Session
from core.embeddings.spaces import embedding_provider_for_space, embedding_space_active
from core.exceptions import ApplicationError
from core.models import EmbeddingSpace
from facts.models import Fact, FactEmbedding, FactScope

_WHITESPACE = re.compile(r"\s+")


def fact_content_normalize(content: str) -> str:
    return _WHITESPACE.sub(" ", content).strip()


def fact_content_hash(content: str) -> str:
    """Equal for contents that differ only in case, spacing or a trailing full stop."""
    key = fact_content_normalize(content).lower().rstrip(".!")
    return hashlib.sha256(key.encode()).hexdigest()


def fact_scopes_validate(*, scopes: Sequence[str], user: EndUser | None) -> list[str]:
    valid = [scope for scope in FactScope.values if scope in set(scopes)]
    if not valid or len(valid) != len(set(scopes)):
        raise ApplicationError("scopes must be a non-empty list of 'user' and 'agent'.", fields={"scopes": ["invalid"]})
    if FactScope.USER in valid and user is None:
        raise ApplicationError("a user-scoped fact needs a user.", fields={"user": ["required for scope 'user'"]})
    return valid


def fact_embeddings_write(*, facts: Sequence[Fact], space: EmbeddingSpace, vectors: Sequence[np.ndarray]) -> None:
    FactEmbedding.objects.bulk_create(
        [
            FactEmbedding(
                fact=fact,
                space=space,
                agent_id=fact.agent_id,
                restricted_to_user_id=fact.restricted_to_user_id,
                embedding=vector,
            )
            for fact, vector in zip(facts, vectors, strict=True)
        ],
        ignore_conflicts=True,
    )


def facts_embed_missing(*, fact_ids: Iterable[int], space: EmbeddingSpace | None = None) -> int:
    """Embed those of the given facts that have no vector in the space yet; idempotent. Returns how many."""
    space = space or embedding_space_active()
    facts = list(Fact.objects.filter(pk__in=list(fact_ids)).exclude(embeddings__space=space).order_by("pk"))
    if not facts:
        return 0
    vectors = embedding_provider_for_space(space=space).embed([fact.content for fact in facts])
    fact_embeddings_write(facts=facts, space=space, vectors=vectors)
    return len(facts)


@transaction.atomic
def fact_create(
    *,
    agent: Agent,
    user: EndUser | None,
    scopes: Sequence[str],
    content: str,
    change_reason: str = "created",
    source_session: Session | None = None,
    source_messages: Sequence[Message] = (),
    tags: Sequence[str] = (),
    metadata: dict | None = None,
    valid_from: datetime | None = None,
    embedding: np.ndarray | None = None,
) -> Fact:
    """Store and embed a new current fact. The caller handles duplicates (the unique constraint rejects a second
    current fact with the same content in the same scope)."""
    scopes = fact_scopes_validate(scopes=scopes, user=user)
    content = fact_content_normalize(content)
    if not content:
        raise ApplicationError("content must not be empty.", fields={"content": ["empty"]})
    owner = user if FactScope.USER in scopes else None
    now = timezone.now()
    fact = Fact.objects.create(
        agent=agent,
        user=owner,
        scopes=scopes,
        content=content,
        content_hash=fact_content_hash(content),
        formed_at=now,
        valid_from=valid_from or now,
        change_reason=change_reason,
        source_session=source_session,
        tags=list(tags),
        metadata=metadata or {},
    )
    if source_messages:
        fact.source_messages.set(source_messages)
    space = embedding_space_active()
    vector = embedding if embedding is not None else embedding_provider_for_space(space=space).embed_one(content)
    fact_embeddings_write(facts=[fact], space=space, vectors=[vector])
    return fact
