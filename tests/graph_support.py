"""Entity graphs for the tests, written the way production writes every relation: a fact states it, and
facts.services.graph.relations_write forms its entities and links it to the fact (formation's batch, and the facts
written by the API, the tools and imports). There is no other write path, so a test graph is one production could
hold.

sister_graph_create is a small graph for the tests of what reads it (tools, MCP, admin): Maria, the user's sister
(also "Mia"), who worked at Acme until that fact was superseded ("new job") and now works at Globex, which is in
Lyon."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agents.models import Agent, EndUser
from conversations.models import Message
from facts.models import Entity, EntityType, Fact, FactScope, Relation
from facts.services.facts import fact_create, fact_supersede
from facts.services.graph import EntityMention, RelationStatement, fact_relations_write

# The user themself, as an extractor names them.
USER = EntityMention("user")


def relation_stated(
    *,
    fact: Fact,
    subject: EntityMention,
    predicate: str,
    object: EntityMention | None = None,
    value: str = "",
    source_messages: Sequence[Message] = (),
) -> Relation:
    """The relation `fact` states (subject --predicate--> object, or value), written in the fact's scope through
    relations_write: its entities are found by any of their names or created."""
    [relation] = fact_relations_write(
        fact=fact,
        statements=[RelationStatement(subject=subject, predicate=predicate, object=object, value=value)],
        source_messages=source_messages,
    )
    return relation


def relation_stated_by_new_fact(
    *,
    agent: Agent,
    user: EndUser | None,
    content: str,
    subject: EntityMention,
    predicate: str,
    object: EntityMention | None = None,
    value: str = "",
) -> Relation:
    """A new fact of `user` (an agent-wide one when None) with the content given, and the one relation it states."""
    fact = fact_create(
        agent=agent, user=user, scopes=[FactScope.USER if user is not None else FactScope.AGENT], content=content
    )
    return relation_stated(fact=fact, subject=subject, predicate=predicate, object=object, value=value)


@dataclass(frozen=True)
class SisterGraph:
    me: Entity
    maria: Entity
    acme: Entity
    globex: Entity
    lyon: Entity
    old_job: Fact
    new_job: Fact


MARIA = EntityMention("Maria", EntityType.PERSON, aliases=("Mia",))
ACME = EntityMention("Acme", EntityType.ORGANISATION)
GLOBEX = EntityMention("Globex", EntityType.ORGANISATION)
LYON = EntityMention("Lyon", EntityType.PLACE)


def sister_graph_create(*, agent: Agent, user: EndUser) -> SisterGraph:
    def said(content: str) -> Fact:
        return fact_create(agent=agent, user=user, scopes=[FactScope.USER], content=content)

    sister = relation_stated(fact=said("Maria is the user's sister"), subject=MARIA, predicate="sister_of", object=USER)
    old_job = said("Maria works at Acme")
    acme = relation_stated(fact=old_job, subject=MARIA, predicate="works_at", object=ACME).object_entity
    new_job = fact_supersede(fact=old_job, content="Maria works at Globex", reason="new job")
    globex = relation_stated(fact=new_job, subject=MARIA, predicate="works_at", object=GLOBEX).object_entity
    lyon = relation_stated(
        fact=said("Globex is based in Lyon"), subject=GLOBEX, predicate="based_in", object=LYON
    ).object_entity
    relation_stated(fact=said("Maria is 34 years old"), subject=MARIA, predicate="age", value="34")
    return SisterGraph(
        me=sister.object_entity,
        maria=Entity.objects.get(pk=sister.subject_id),
        acme=acme,
        globex=globex,
        lyon=lyon,
        old_job=old_job,
        new_job=new_job,
    )
