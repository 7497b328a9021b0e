"""Reads of the entity graph: a scope's entities by name, an entity's relations (current and past) and facts. Search
walks the graph on its own (facts.selectors.graph_search)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Count, Func, IntegerField, OuterRef, Q, QuerySet, Subquery, TextField, Value
from django.db.models.functions import Coalesce, Length

from agents.models import Agent, EndUser
from core.exceptions import NotFoundError
from facts.models import Entity, Fact, Relation
from facts.services.graph import entity_name_normalize


class _ArrayToString(Func):
    function = "array_to_string"
    output_field = TextField()


def entities_named(*, queryset: QuerySet[Entity], query: str) -> QuerySet[Entity]:
    """Those of `queryset` whose name or an alias contains `query` (case-insensitive); all of them for an empty one."""
    needle = entity_name_normalize(query)
    if not needle:
        return queryset
    # The aliases (the name is one of them) joined by a separator no name holds: one ILIKE over every name.
    return queryset.alias(every_name=_ArrayToString("aliases", Value("\x1f"))).filter(every_name__icontains=needle)


def entities_list(*, agent: Agent, user: EndUser | None, query: str = "") -> QuerySet[Entity]:
    """The current (not merged) entities of one user, or the agent-wide ones when `user` is None; with `query`, those
    whose name or an alias contains it (case-insensitive)."""
    queryset = Entity.objects.filter(agent=agent, user=user, merged_into__isnull=True).select_related("user")
    return entities_named(queryset=queryset, query=query)


def entities_with_current_relation_counts(*, queryset: QuerySet[Entity]) -> QuerySet[Entity]:
    """`queryset` annotated with `current_relations`: how many current relations each entity is the subject or the
    object of. Correlated subqueries, so a page of a long list counts only the rows it shows."""

    def side(column: str) -> Coalesce:
        counted = (
            Relation.objects.filter(**{column: OuterRef("pk")}, valid_to__isnull=True)
            .order_by()
            .values(column)
            .annotate(total=Count("pk"))
            .values("total")
        )
        return Coalesce(Subquery(counted, output_field=IntegerField()), 0)

    return queryset.annotate(current_relations=side("subject") + side("object_entity"))


def entity_get(*, agent: Agent, entity_id: int) -> Entity:
    """One of the agent's entities; another agent's id is not found, like a missing one."""
    entity = Entity.objects.select_related("user", "merged_into").filter(agent=agent, pk=entity_id).first()
    if entity is None:
        raise NotFoundError(f"No entity {entity_id}.", fields={"id": ["not found"]})
    return entity


def entity_find(*, agent: Agent, user: EndUser | None, name: str, limit: int = 6) -> list[Entity]:
    """The entities a conversation can see that `name` names, best first: the user's own before the agent-wide ones,
    an exact name or alias before one that only contains `name`, then the shortest name. At most `limit`."""
    needle = entity_name_normalize(name)
    if not needle:
        return []
    found: list[Entity] = []
    scopes = [user, None] if user is not None else [None]
    for exact in (True, False):
        for scope in scopes:
            queryset = entities_list(agent=agent, user=scope, query="" if exact else needle)
            if exact:
                queryset = queryset.filter(aliases__contains=[needle])
            known = [entity.pk for entity in found]
            found.extend(queryset.exclude(pk__in=known).order_by(Length("name"), "pk")[: limit - len(found)])
            if len(found) >= limit:
                return found
    return found


def entity_relations(*, entity: Entity) -> QuerySet[Relation]:
    """Every relation the entity is the subject or the object of, current and ended, the most recent first."""
    return (
        Relation.objects.filter(Q(subject=entity) | Q(object_entity=entity))
        .select_related("subject", "object_entity")
        .prefetch_related("source_facts")
        .order_by("-valid_from", "-pk")
    )


def relations_among(*, entity_ids: Iterable[int], limit: int = 100) -> QuerySet[Relation]:
    """The current relations whose subject and object are both among `entity_ids` (an entity's neighbours: what ties
    them to each other), at most `limit`."""
    ids = list(entity_ids)
    return (
        Relation.objects.filter(subject_id__in=ids, object_entity_id__in=ids, valid_to__isnull=True)
        .select_related("subject", "object_entity")
        .order_by("-valid_from", "-pk")[:limit]
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
class RelationHistory:
    """One subject's relations of one predicate with this entity, oldest first: how "Maria works_at" changed."""

    subject: Entity
    predicate: str
    relations: list[Relation]

    @property
    def is_current(self) -> bool:
        return any(relation.valid_to is None for relation in self.relations)


def entity_relation_histories(*, relations: Iterable[Relation]) -> list[RelationHistory]:
    """`relations` (an entity's, as entity_relations gives them) grouped by subject and predicate, each group oldest
    first; the groups with a current relation first, then by the most recent change."""
    groups: dict[tuple[int, str], list[Relation]] = {}
    for relation in relations:
        groups.setdefault((relation.subject_id, relation.predicate), []).append(relation)
    histories = [
        RelationHistory(
            subject=members[0].subject,
            predicate=predicate,
            relations=sorted(members, key=lambda relation: (relation.valid_from, relation.pk)),
        )
        for (_, predicate), members in groups.items()
    ]
    return sorted(
        histories,
        key=lambda history: (not history.is_current, -max(r.valid_from.timestamp() for r in history.relations)),
    )
