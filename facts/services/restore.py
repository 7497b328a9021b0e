"""Fact versions of a native export written back as they were exported (portability's lossless import), the caller
having remapped their ids: with the messages they came from and were closed by, embedded in the active space."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.models import EmbeddingSpace
from facts.models import Fact
from facts.services.facts import fact_embeddings_write


def facts_restore(
    *,
    facts: Sequence[Fact],
    message_links: dict[str, Sequence[Sequence[int]]],
    space: EmbeddingSpace,
    vectors: Sequence[np.ndarray] | None,
) -> list[Fact]:
    """`message_links[name][i]`: the message ids of facts[i] for the relation `name` (source_messages,
    closed_by_messages). Without vectors the facts wait for facts_embed_missing."""
    created = Fact.objects.bulk_create(facts)
    for name, per_fact in message_links.items():
        through = getattr(Fact, name).through
        through.objects.bulk_create(
            [
                through(fact_id=fact.pk, message_id=message_id)
                for fact, message_ids in zip(created, per_fact, strict=True)
                for message_id in message_ids
            ]
        )
    if vectors is not None:
        fact_embeddings_write(facts=created, space=space, vectors=vectors)
    return created


def fact_supersession_restore(*, fact_id: int, superseded_by_id: int) -> None:
    """A version's successor, written once both exist (an export lists versions in order, successors after)."""
    Fact.objects.filter(pk=fact_id).update(superseded_by_id=superseded_by_id)
