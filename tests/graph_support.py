"""A small entity graph for the tests of what reads it (tools, MCP, admin): Maria, the user's sister (also "Mia"), who
worked at Acme until that fact was superseded ("new job") and now works at Globex, which is in Lyon."""

from __future__ import annotations

from dataclasses import dataclass

from agents.models import Agent, EndUser
from facts.models import Entity, EntityType, Fact, FactScope
from facts.services.facts import fact_create, fact_supersede
from facts.services.graph import entity_upsert, relation_add, user_entity_get_or_create


@dataclass(frozen=True)
class SisterGraph:
    me: Entity
    maria: Entity
    acme: Entity
    globex: Entity
    lyon: Entity
    old_job: Fact
    new_job: Fact


def sister_graph_create(*, agent: Agent, user: EndUser) -> SisterGraph:
    me = user_entity_get_or_create(agent=agent, user=user)
    maria = entity_upsert(agent=agent, user=user, name="Maria", entity_type=EntityType.PERSON, aliases=["Mia"])
    acme = entity_upsert(agent=agent, user=user, name="Acme", entity_type=EntityType.ORGANISATION)
    globex = entity_upsert(agent=agent, user=user, name="Globex", entity_type=EntityType.ORGANISATION)
    lyon = entity_upsert(agent=agent, user=user, name="Lyon", entity_type=EntityType.PLACE)
    sister = fact_create(agent=agent, user=user, scopes=[FactScope.USER], content="Maria is the user's sister")
    relation_add(subject=maria, predicate="sister_of", object_entity=me, source_facts=[sister])
    old_job = fact_create(agent=agent, user=user, scopes=[FactScope.USER], content="Maria works at Acme")
    relation_add(subject=maria, predicate="works_at", object_entity=acme, source_facts=[old_job])
    new_job = fact_supersede(fact=old_job, content="Maria works at Globex", reason="new job")
    relation_add(subject=maria, predicate="works_at", object_entity=globex, source_facts=[new_job])
    office = fact_create(agent=agent, user=user, scopes=[FactScope.USER], content="Globex is based in Lyon")
    relation_add(subject=globex, predicate="based_in", object_entity=lyon, source_facts=[office])
    age = fact_create(agent=agent, user=user, scopes=[FactScope.USER], content="Maria is 34 years old")
    relation_add(subject=maria, predicate="age", object_value="34", source_facts=[age])
    return SisterGraph(me=me, maria=maria, acme=acme, globex=globex, lyon=lyon, old_job=old_job, new_job=new_job)
