"""get_entity: what memory knows about someone or something by name (its other names, its relations, the facts that
state them), while the agent's RAG is on."""

from __future__ import annotations

from typing import Any

from django.db.models import Q
from django.utils import timezone
from rest_framework import serializers

from core.api.fields import StrictCharField
from facts.models import Entity, FactScope, Relation
from facts.selectors.graph import entity_facts, entity_find, entity_relations
from formation.tools.base import Tool, ToolContext, arguments_validate
from formation.tools.guards import memory_shown, world_time_shown

# What get_entity returns at most, so that one answer about a well-known entity stays a few hundred tokens.
ENTITY_TOOL_MAX_RELATIONS = 25
ENTITY_TOOL_MAX_FACTS = 15
ENTITY_TOOL_MAX_OTHER_MATCHES = 5


class GetEntityArguments(serializers.Serializer):
    name = StrictCharField(max_length=200, help_text="The name, or any name it is known by.")
    include_ended = serializers.BooleanField(
        default=False, help_text="Also the relations that no longer hold, with when they held (default false)."
    )

    def validate_include_ended(self, value: object) -> bool:
        # Strict like the other arguments: a model's "yes" or 1 is a mistake to report back, not a guess to make.
        if not isinstance(self.initial_data.get("include_ended", False), bool):
            raise serializers.ValidationError("must be true or false.")
        return bool(value)


def _relation(relation: Relation, *, ended: bool) -> dict[str, Any]:
    stated = {
        "subject": relation.subject.name,
        "predicate": relation.predicate,
        "object": relation.object_entity.name if relation.object_entity is not None else relation.object_value,
        "since": relation.valid_from.date().isoformat(),
    } | world_time_shown(relation.world_time)
    if ended and relation.valid_to is not None:
        stated |= {"until": relation.valid_to.date().isoformat(), "why_ended": relation.closed_reason}
    return stated


def get_entity(context: ToolContext, arguments: dict) -> dict:
    options = arguments_validate(GetEntityArguments, arguments)
    matches = entity_find(
        agent=context.agent, user=context.user, name=options["name"], limit=1 + ENTITY_TOOL_MAX_OTHER_MATCHES
    )
    if not matches:
        return {"found": False, "note": "memory knows no one and nothing by that name; try search_memory."}
    entity: Entity = matches[0]
    relations = entity_relations(entity=entity)
    current = relations.filter(valid_to__isnull=True)
    ended = relations.filter(valid_to__isnull=False) if options["include_ended"] else relations.none()
    visible = Q(scopes__contains=[FactScope.AGENT])
    if context.user is not None:
        visible |= Q(user=context.user)
    facts = entity_facts(entity=entity).filter(visible)
    if not options["include_ended"]:  # what ended: closed, or expired (retention closes it within the hour)
        facts = facts.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()), valid_to__isnull=True)
    answer: dict[str, Any] = {
        "found": True,
        "entity": {
            "name": entity.name,
            "type": entity.entity_type,
            "aliases": [alias for alias in entity.aliases if alias != entity.name.lower()],
            "is_this_user": entity.is_user,
        },
        "relations": [_relation(relation, ended=False) for relation in current[:ENTITY_TOOL_MAX_RELATIONS]],
        "facts": [
            memory_shown(fact) | ({} if fact.valid_to is None else {"until": fact.valid_to.date().isoformat()})
            for fact in facts[:ENTITY_TOOL_MAX_FACTS]
        ],
    }
    if options["include_ended"]:
        answer["ended_relations"] = [_relation(relation, ended=True) for relation in ended[:ENTITY_TOOL_MAX_RELATIONS]]
    left_out = {
        "relations": max(0, current.count() - ENTITY_TOOL_MAX_RELATIONS),
        "ended_relations": max(0, ended.count() - ENTITY_TOOL_MAX_RELATIONS),
        "facts": max(0, facts.count() - ENTITY_TOOL_MAX_FACTS),
    }
    if any(left_out.values()):
        answer["left_out"] = {name: count for name, count in left_out.items() if count}
    if len(matches) > 1:
        answer["other_matches"] = [other.name for other in matches[1:]]
    return answer


TOOL = Tool(
    name="get_entity",
    description="What memory knows about someone or something by name (a person, place, organisation, thing or "
    "event): its other names, how it relates to others (who works where, who is whose sister) and the facts that say "
    "so. Use it for 'what do you know about X' and to follow a relation to the next person or place; 'me' is this "
    "user.",
    arguments=GetEntityArguments,
    run=get_entity,
    reads_memory=True,
)
