"""Reads of the entity graph: a scope's entities by name, an entity's relations (current and past) and facts, and the
neighbourhood of a set of entities one or two hops out, with the facts that state it (for search)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection
from django.db.models import Func, Q, QuerySet, TextField, Value

from agents.models import Agent, EndUser
from core.exceptions import NotFoundError
from facts.models import Entity, Fact, Relation
from facts.services.graph import entity_name_normalize

MAX_HOPS = 2


class _ArrayToString(Func):
    function = "array_to_string"
    output_field = TextField()


def entities_list(*, agent: Agent, user: EndUser | None, query: str = "") -> QuerySet[Entity]:
    """The current (not merged) entities of one user, or the agent-wide ones when `user` is None; with `query`, those
    whose name or an alias contains it (case-insensitive)."""
    queryset = Entity.objects.filter(agent=agent, user=user, merged_into__isnull=True).select_related("user")
    needle = entity_name_normalize(query)
    if needle:
        # The aliases (the name is one of them) joined by a separator no name holds: one ILIKE over every name.
        queryset = queryset.alias(every_name=_ArrayToString("aliases", Value("\x1f"))).filter(
            every_name__icontains=needle
        )
    return queryset


def entity_get(*, agent: Agent, entity_id: int) -> Entity:
    """One of the agent's entities; another agent's id is not found, like a missing one."""
    entity = Entity.objects.select_related("user", "merged_into").filter(agent=agent, pk=entity_id).first()
    if entity is None:
        raise NotFoundError(f"No entity {entity_id}.", fields={"id": ["not found"]})
    return entity


def entity_relations(*, entity: Entity) -> QuerySet[Relation]:
    """Every relation the entity is the subject or the object of, current and ended, the most recent first."""
    return (
        Relation.objects.filter(Q(subject=entity) | Q(object_entity=entity))
        .select_related("subject", "object_entity")
        .prefetch_related("source_facts")
        .order_by("-valid_from", "-pk")
    )


def entity_facts(*, entity: Entity) -> QuerySet[Fact]:
    """The fact versions that stated the entity's relations, current and closed, the most recent first."""
    stated = Relation.objects.filter(Q(subject=entity) | Q(object_entity=entity)).values("source_facts")
    return (
        Fact.objects.filter(pk__in=stated)
        .select_related("user", "source_session")
        .defer("search_vector")
        .order_by("-formed_at")
    )


@dataclass(frozen=True)
class Neighbourhood:
    """Entities within reach, each with its distance in hops (0 for the start), and the current facts that state a
    current relation of one of them, each with the distance of the nearest entity it touches."""

    entity_hops: dict[int, int]
    fact_hops: dict[int, int]


# Each step looks a relation up by its subject and by its object separately (two index scans): an OR of the two
# would leave the planner a scan of every relation. The facts of the relations reached are read per relation
# (OFFSET 0 keeps the lateral lookup from being flattened into a hash of every relation's facts).
_NEIGHBOURS_SQL = """
WITH RECURSIVE walk(entity_id, hops) AS (
    SELECT start_id, 0 FROM unnest(%(start)s::bigint[]) AS start_id
  UNION
    SELECT step.entity_id, w.hops + 1
    FROM walk w
    CROSS JOIN LATERAL (
        SELECT r.object_entity_id AS entity_id FROM facts_relation r
        WHERE r.subject_id = w.entity_id AND r.valid_to IS NULL AND r.object_entity_id IS NOT NULL
        UNION ALL
        SELECT r.subject_id FROM facts_relation r WHERE r.object_entity_id = w.entity_id AND r.valid_to IS NULL
    ) step
    WHERE w.hops < %(hops)s
), reached AS (
    SELECT entity_id, min(hops) AS hops FROM walk GROUP BY entity_id
), touching AS (
    SELECT r.id, reached.hops FROM reached JOIN facts_relation r ON r.subject_id = reached.entity_id
    WHERE r.valid_to IS NULL
    UNION ALL
    SELECT r.id, reached.hops FROM reached JOIN facts_relation r ON r.object_entity_id = reached.entity_id
    WHERE r.valid_to IS NULL
)
SELECT 'entity', entity_id, hops FROM reached
UNION ALL
SELECT 'fact', link.fact_id, min(touching.hops)
FROM touching
CROSS JOIN LATERAL (
    SELECT fact_id FROM facts_relation_source_facts WHERE relation_id = touching.id OFFSET 0
) link
JOIN facts_fact f ON f.id = link.fact_id AND f.valid_to IS NULL
GROUP BY link.fact_id
"""


def entity_neighbours(*, entity_ids: list[int], hops: int = 1) -> Neighbourhood:
    """The entities `hops` (1 or 2) current relations away from `entity_ids`, and the current facts stating the
    current relations of all of them (the start's included), in one statement. The caller passes entities of the
    scope it may read: relations never cross a scope, so neither does the walk."""
    if hops not in range(1, MAX_HOPS + 1):
        raise ValueError(f"hops must be from 1 to {MAX_HOPS}")
    if not entity_ids:
        return Neighbourhood(entity_hops={}, fact_hops={})
    entity_hops: dict[int, int] = {}
    fact_hops: dict[int, int] = {}
    with connection.cursor() as cursor:
        cursor.execute(_NEIGHBOURS_SQL, {"start": list(entity_ids), "hops": hops})
        for kind, pk, distance in cursor.fetchall():
            (entity_hops if kind == "entity" else fact_hops)[pk] = distance
    return Neighbourhood(entity_hops=entity_hops, fact_hops=fact_hops)
