"""Formation writes the relations of all its facts together (relations_write): the same graph as adding them one by
one (what formation did before, through the single-write services entity_upsert and relation_add, since removed), in
a number of statements that does not grow with the relations."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.models import Agent, EndUser
from facts.models import Entity, EntityType, FactScope, Relation
from facts.services.facts import fact_close, fact_create
from facts.services.graph import EntityMention, RelationStatement, StatedRelations, relations_write
from facts.services.graph_extraction import facts_graph_extract
from tests.factories import AgentFactory, EndUserFactory
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
    earlier = [
        (
            "The user has a sister.",
            RelationStatement(EntityMention("the user's sister", EntityType.PERSON), "sister_of", USER),
        ),
        ("The user has lived in Porto for years.", RelationStatement(USER, "lives_in", value="Porto")),
    ]
    relations_write(
        stated=[
            StatedRelations(
                fact=fact_create(agent=agent, user=user, scopes=[FactScope.USER], content=content),
                statements=[statement],
            )
            for content, statement in earlier
        ]
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


# The graph that writing the session's relations one by one formed on _memory_so_far (each mention upserted, each
# relation added: entity_upsert and relation_add, compared with the batch until they were removed), as _graph reads
# it: entities (the user's?, name, type, aliases, is the user) and relations (the user's?, subject, predicate, object,
# current, source facts, source messages).
SESSION_MESSAGE = frozenset({"My sister Maria works at Acme Corp."})
ONE_BY_ONE_ENTITIES = {
    (False, "Globex", "organisation", ("globex",), False),
    (False, "Lyon", "place", ("lyon",), False),
    (True, "Acme Corp", "organisation", ("acme corp",), False),
    (True, "Berlin", "place", ("berlin",), False),
    (True, "Maria", "person", ("the user's sister", "maria"), False),
    (True, "the user", "person", ("i", "me", "the user", "user"), True),
}
ONE_BY_ONE_RELATIONS = {
    (False, "Globex", "based_in", "Lyon", True, frozenset({"The office is in Lyon."}), SESSION_MESSAGE),
    (True, "Acme Corp", "based_in", "Berlin", True, frozenset({"Acme Corp is based in Berlin."}), SESSION_MESSAGE),
    (
        True,
        "Maria",
        "sister_of",
        "the user",
        True,
        frozenset({"The user has a sister.", "The user's sister Maria works at Acme Corp."}),
        SESSION_MESSAGE,
    ),
    (
        True,
        "Maria",
        "works_at",
        "Acme Corp",
        True,
        frozenset({"The user's sister Maria works at Acme Corp."}),
        SESSION_MESSAGE,
    ),
    *(
        (
            True,
            "the user",
            "likes",
            f"thing {number}",
            True,
            frozenset({"The user likes many things."}),
            SESSION_MESSAGE,
        )
        for number in range(3)
    ),
    (
        True,
        "the user",
        "lives_in",
        "Porto",
        True,
        frozenset({"The user lives in Porto.", "The user has lived in Porto for years."}),
        SESSION_MESSAGE,
    ),
}


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
    agent = AgentFactory(name="Graph agent")
    user = EndUserFactory(agent=agent)
    _memory_so_far(agent, user)
    return agent, user


def test_one_batch_forms_the_graph_that_relation_by_relation_writes_formed():
    batched, batched_user = _agent_with_memory()

    relations_write(stated=_session_facts(batched, batched_user, likes=3))

    assert _graph(batched) == (ONE_BY_ONE_ENTITIES, ONE_BY_ONE_RELATIONS)
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
