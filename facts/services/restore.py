"""Fact versions, entities and relations of a native export written back as they were exported (portability's
lossless import), the caller having remapped their ids: facts with the messages they came from and were closed by,
embedded in the active space; relations with their validity and the facts and messages they came from."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np

from core.models import EmbeddingSpace
from core.runtime.db import automatic_times_restore
from facts.models import Entity, Fact, Relation
from facts.services.facts import fact_embeddings_write
from facts.world_time import TimePrecision


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


def entity_restore(*, entity: Entity, times: dict[str, datetime]) -> Entity:
    """An exported entity written back as it was (its merge, if any, is restored once both exist)."""
    entity.save(force_insert=True)
    automatic_times_restore(objs=[entity], times=[times])
    return entity


def entity_merge_restore(*, entity_id: int, merged_into_id: int) -> None:
    Entity.objects.filter(pk=entity_id).update(merged_into_id=merged_into_id)


def fact_world_time_of_an_earlier_release(*, fact: Fact) -> None:
    """A fact exported before world time was kept gets what the upgrade's migration gives a stored one
    (facts/migrations/0010_world_time.py): a day its text names is when it began to hold."""
    if fact.refers_to is not None:
        fact.held_from, fact.held_from_precision = fact.refers_to, TimePrecision.DAY


def relation_restore(
    *,
    relation: Relation,
    source_fact_ids: Sequence[int],
    source_message_ids: Sequence[int],
    world_time_from_facts: bool = False,
) -> Relation:
    """An exported relation written back with its validity as it was, linked to the restored facts and messages.
    `world_time_from_facts`: exported before world time was kept, it begins with the earliest day its facts name, as
    the upgrade's migration gives a stored one."""
    if world_time_from_facts:
        earliest = (
            Fact.objects.filter(pk__in=source_fact_ids, refers_to__isnull=False)
            .order_by("refers_to")
            .values_list("refers_to", flat=True)
            .first()
        )
        if earliest is not None:
            relation.held_from, relation.held_from_precision = earliest, TimePrecision.DAY
    relation.save(force_insert=True)
    if source_fact_ids:
        relation.source_facts.add(*source_fact_ids)
    if source_message_ids:
        relation.source_messages.add(*source_message_ids)
    return relation
