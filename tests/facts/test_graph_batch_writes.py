"""Formation writes the relations of all its facts together (relations_write): the same graph as adding them one by
one with entity_upsert and relation_add, in a number of statements that does not grow with the relations."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.models import Agent, EndUser
from facts.models import Entity, EntityType, FactScope, Relation
from facts.services.facts import fact_close, fact_create
from facts.services.graph import (
    EntityMention,
    RelationStatement,
    StatedRelations,
    entity_upsert,
    relation_add,
    relations_write,
    user_entity_get_or_create,
)
from facts.services.graph_extraction import facts_graph_extract
from tests.formation_support import user_says

pytestmark = pytest.mark.django_db

USER = EntityMention("user")
MARIA = EntityMention("Maria", EntityType.PERSON, aliases=("the user's sister",))
ACME = EntityMention("Acme Corp", EntityType.ORGANISATION)


def _statements_of_a_session(likes: int) -> list[tuple[list[str], str, list[RelationStatement]]]:
    """(scopes, content, statements) of one formation run: the sister named at last, an entity typed more precisely
    later and not retyped by a guess, a relation already current, an alias that is no relation, an agent-wide fact
    naming the user (dropped) and one naming others (kept, in the agent's scope), and `likes` plain values."""
    return [
        (
            [FactScope.USER],
            "The user's sister Maria works at Acme Corp.",
            [
                RelationStatement(subject=MARIA, predicate="sister_of", object=USER),
                RelationStatement(subject=EntityMention("maria"), predicate="works at", object=ACME),
            ],
        ),
        ([FactScope.USER], "The user lives in Porto.", [RelationStatement(USER, "lives_in", value="Porto")]),
        (
            [FactScope.USER],
            "Acme Corp is based in Berlin.",
            [
                RelationStatement(EntityMention("Acme Corp"), "based_in", EntityMention("Berlin", EntityType.PLACE)),
                RelationStatement(MARIA, "is", EntityMention("Maria")),
            ],
        ),
        (
            [FactScope.AGENT],
            "The office is in Lyon.",
            [
                RelationStatement(USER, "visits", EntityMention("Lyon", EntityType.PLACE)),
                RelationStatement(EntityMention("Globex", EntityType.ORGANISATION), "based_in", EntityMention("Lyon")),
            ],
        ),
        (
            [FactScope.USER],
            "The user likes many things.",
            [RelationStatement(USER, "likes", value=f"thing {number}") for number in range(likes)],
        ),
    ]


def _memory_so_far(agent, user) -> None:
    """What an earlier session formed: the sister described, and where the user lives."""
    earlier = fact_create(
        agent=agent, user=user, scopes=[FactScope.USER], content="The user has lived in Porto for years."
    )
    entity_upsert(agent=agent, user=user, name="the user's sister", entity_type=EntityType.PERSON)
    relation_add(
        subject=user_entity_get_or_create(agent=agent, user=user),
        predicate="lives_in",
        object_value="Porto",
        source_facts=[earlier],
    )


def _session_facts(agent, user, *, likes: int) -> list[StatedRelations]:
    messages = list(user_says(agent, "My sister Maria works at Acme Corp.", user=user.external_id).messages.all())
    return [
        StatedRelations(
            fact=fact_create(
                agent=agent, user=user if FactScope.USER in scopes else None, scopes=scopes, content=content
            ),
            statements=statements,
            source_messages=messages,
        )
        for scopes, content, statements in _statements_of_a_session(likes)
    ]


def _one_by_one(stated: list[StatedRelations]) -> None:
    """The graph as formation wrote it before relations_write: each mention upserted, each relation added."""

    def entity(fact, mention):
        if mention.is_user:
            return user_entity_get_or_create(agent=fact.agent, user=fact.user) if fact.user else None
        return entity_upsert(
            agent=fact.agent,
            user=fact.user,
            name=mention.name,
            entity_type=mention.entity_type,
            aliases=mention.aliases,
        )

    for item in stated:
        for statement in item.statements:
            subject = entity(item.fact, statement.subject)
            target = entity(item.fact, statement.object) if statement.object else None
            if subject is None or (statement.object and target is None) or (target and target.pk == subject.pk):
                continue
            relation_add(
                subject=subject,
                predicate=statement.predicate,
                object_entity=target,
                object_value=statement.value,
                source_facts=[item.fact],
                source_messages=item.source_messages,
                valid_from=item.fact.valid_from,
            )


def _graph(agent) -> tuple[set, set]:
    entities = {
        (entity.user_id is not None, entity.name, entity.entity_type, tuple(entity.aliases), entity.is_user)
        for entity in Entity.objects.filter(agent=agent)
    }
    relations = {
        (
            relation.user_id is not None,
            relation.subject.name,
            relation.predicate,
            relation.object_entity.name if relation.object_entity else relation.object_value,
            relation.valid_to is None,
            frozenset(fact.content for fact in relation.source_facts.all()),
            frozenset(message.content for message in relation.source_messages.all()),
        )
        for relation in Relation.objects.filter(agent=agent).select_related("subject", "object_entity")
    }
    return entities, relations


def _agent_with_memory() -> tuple[Agent, EndUser]:
    agent = Agent.objects.create(external_id=f"agent-{uuid.uuid4().hex[:8]}", name="Graph agent")
    user = EndUser.objects.create(agent=agent, external_id="u1")
    _memory_so_far(agent, user)
    return agent, user


def test_one_batch_forms_the_graph_that_relation_by_relation_writes_formed():
    by_one, by_one_user = _agent_with_memory()
    _one_by_one(_session_facts(by_one, by_one_user, likes=3))
    batched, batched_user = _agent_with_memory()

    relations_write(stated=_session_facts(batched, batched_user, likes=3))

    assert _graph(batched) == _graph(by_one)
    entities, relations = _graph(batched)
    assert (True, "Maria", "person", ("the user's sister", "maria"), False) in entities  # named at last
    assert (True, "Acme Corp", "organisation", ("acme corp",), False) in entities
    assert (False, "Globex", "organisation", ("globex",), False) in entities  # agent-wide: the agent's own
    porto = next(relation for relation in relations if relation[3] == "Porto")
    assert porto[5] == {"The user has lived in Porto for years.", "The user lives in Porto."}  # gained the fact
    assert len(porto[6]) == 1  # and the message
    assert Relation.objects.filter(agent=batched, object_value="Porto").count() == 1
    assert not Relation.objects.filter(agent=batched, user__isnull=True, predicate="visits").exists()
    assert not Relation.objects.filter(agent=batched, predicate="is").exists()


def test_the_statements_of_a_batch_do_not_grow_with_its_relations():
    counts = []
    for likes in (2, 30):
        agent, user = _agent_with_memory()
        stated = _session_facts(agent, user, likes=likes)
        with CaptureQueriesContext(connection) as queries:
            relations_write(stated=stated)
        counts.append(len(queries))
        assert Relation.objects.filter(agent=agent, predicate="likes").count() == likes

    assert counts[0] == counts[1]


def test_a_formation_batch_of_many_relations_takes_a_bounded_number_of_statements(django_assert_max_num_queries):
    agent, user = _agent_with_memory()
    stated = _session_facts(agent, user, likes=40)

    with django_assert_max_num_queries(15):  # 14, and the read of the user's speaker names (user_names)
        written = relations_write(stated=stated)

    assert len(written) == 45  # every statement but the agent-wide one naming the user and the alias


def test_facts_written_without_formation_join_the_graph_in_one_batch(agent, end_user):
    facts = [
        fact_create(agent=agent, user=end_user, scopes=[FactScope.USER], content=content)
        for content in ("Maria works at Globex.", "The user lives in Porto.", "The user works at Initech.")
    ]
    fact_close(fact=facts[2], reason="left")

    written = facts_graph_extract(fact_ids=[fact.pk for fact in facts])

    relations = Relation.objects.filter(user=end_user).select_related("subject", "object_entity")
    assert written == len(relations) == 2  # the closed version's relation would be born ended
    assert {(relation.predicate, relation.object_entity.name) for relation in relations} == {
        ("works_at", "Globex"),
        ("lives_in", "Porto"),
    }
