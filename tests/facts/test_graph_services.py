"""The entity graph's writes and reads: entities found by any name, relations added once while current and ended (not
deleted) with the fact versions that stated them, merge and rename."""

from __future__ import annotations

import pytest

from core.exceptions import ApplicationError
from facts.models import Entity, EntityType, FactScope, Relation
from facts.selectors.graph import entities_list, entity_facts, entity_relations
from facts.services.facts import fact_close, fact_create, fact_supersede, facts_erase, facts_scope_change
from facts.services.graph import (
    EntityMention,
    RelationStatement,
    entity_merge,
    entity_rename,
    fact_relations_write,
    user_entity_get_or_create,
    user_names,
)
from portability.services.erasure import user_erase
from tests.factories import EndUserFactory
from tests.graph_support import USER, relation_stated, relation_stated_by_new_fact

pytestmark = pytest.mark.django_db

SISTER = RelationStatement(
    subject=EntityMention(name="Maria", entity_type=EntityType.PERSON),
    predicate="sister_of",
    object=EntityMention("user"),
)


def _fact(agent, user, content):
    return fact_create(agent=agent, user=user, scopes=[FactScope.USER], content=content)


def _sister_named(agent, user, mention: EntityMention, content: str) -> Entity:
    """The entity a new fact of `user` names as the user's sister."""
    relation = relation_stated_by_new_fact(
        agent=agent,
        user=user,
        content=content,
        subject=mention,
        predicate="sister_of",
        object=USER,
    )
    return Entity.objects.get(pk=relation.subject_id)


def test_an_entity_is_found_by_any_of_its_names_and_gains_the_new_ones(agent, end_user):
    described = _sister_named(
        agent, end_user, EntityMention("the user's sister", EntityType.PERSON), "The user has a sister"
    )
    named = _sister_named(
        agent, end_user, EntityMention("Maria", aliases=("the user's sister",)), "The user's sister is Maria"
    )

    assert named.pk == described.pk
    assert named.name == "Maria"  # a described someone takes the name they are given
    assert named.aliases == ["the user's sister", "maria"]
    assert named.entity_type == EntityType.PERSON  # a known type is not changed by a later guess
    assert _sister_named(agent, end_user, EntityMention("MARIA"), "MARIA IS MY SISTER").pk == described.pk
    other_user = EndUserFactory(agent=agent, external_id="user-2")
    assert _sister_named(agent, other_user, EntityMention("Maria"), "The user's sister is Maria").pk != described.pk


def test_the_user_entity_is_one_per_user(agent, end_user):
    first = user_entity_get_or_create(agent=agent, user=end_user)

    assert user_entity_get_or_create(agent=agent, user=end_user).pk == first.pk
    assert first.is_user and "i" in first.aliases


def test_a_relation_is_added_once_while_current_and_links_every_source(agent, end_user):
    first, second = (
        _fact(agent, end_user, "Maria is the user's sister"),
        _fact(agent, end_user, "The user has a sister"),
    )
    fact_relations_write(fact=first, statements=[SISTER], source_messages=[])
    fact_relations_write(fact=second, statements=[SISTER], source_messages=[])

    relation = Relation.objects.get()
    assert relation.predicate == "sister_of" and relation.object_entity.is_user
    assert set(relation.source_facts.all()) == {first, second}


def test_a_superseded_fact_ends_its_relations_and_keeps_them(agent, end_user):
    fact = _fact(agent, end_user, "The user works at Acme Corp")
    works = RelationStatement(
        subject=EntityMention("user"), predicate="works at", object=EntityMention("Acme Corp", "organisation")
    )
    fact_relations_write(fact=fact, statements=[works], source_messages=[])

    successor = fact_supersede(fact=fact, content="The user works at Globex", reason="new job")

    relation = Relation.objects.get()
    assert relation.predicate == "works_at"
    assert relation.valid_to is not None and relation.closed_reason == "new job"
    assert list(entity_relations(entity=relation.object_entity)) == [relation]  # history stays readable
    assert successor.relations.count() == 0


def test_a_relation_stated_by_another_current_fact_stays_current_when_one_closes(agent, end_user):
    first, second = (
        _fact(agent, end_user, "Maria is the user's sister"),
        _fact(agent, end_user, "The user has a sister"),
    )
    for fact in (first, second):
        fact_relations_write(fact=fact, statements=[SISTER], source_messages=[])

    fact_close(fact=first, reason="deleted: wrong")
    assert Relation.objects.get().valid_to is None
    fact_close(fact=second, reason="deleted: wrong too")
    assert Relation.objects.get().closed_reason == "deleted: wrong too"


def test_a_new_version_saying_the_same_keeps_its_relations_current(agent, end_user):
    fact = _fact(agent, end_user, "Maria is the user's sister")
    fact_relations_write(fact=fact, statements=[SISTER], source_messages=[])

    facts_scope_change(facts=[fact], scopes=[FactScope.USER, FactScope.AGENT], reason="shared", written_by="operator")

    relation = Relation.objects.get()
    assert relation.valid_to is None and relation.source_facts.count() == 2


def test_erasing_a_fact_deletes_the_relations_only_it_stated(agent, end_user):
    fact = _fact(agent, end_user, "Maria is the user's sister")
    fact_relations_write(fact=fact, statements=[SISTER], source_messages=[])

    facts_erase(fact_ids=[fact.pk])

    assert not Relation.objects.exists()


def test_merge_moves_aliases_and_relations_and_records_the_merge(agent, end_user):
    fact = _fact(agent, end_user, "Maria is the user's sister")
    maria = relation_stated(
        fact=fact, subject=EntityMention("Maria", EntityType.PERSON), predicate="sister_of", object=USER
    ).subject
    user_entity = user_entity_get_or_create(agent=agent, user=end_user)
    mary_fact = _fact(agent, end_user, "Mary is the user's sister and lives in Porto")
    twin, moved = fact_relations_write(
        fact=mary_fact,
        statements=[
            RelationStatement(EntityMention("Mary"), "sister_of", USER),
            RelationStatement(EntityMention("Mary"), "lives_in", value="Porto"),
        ],
        source_messages=[],
    )
    mary = twin.subject

    kept = entity_merge(kept=maria, merged=mary)

    mary.refresh_from_db()
    assert mary.merged_into_id == kept.pk and mary.aliases == []
    assert set(kept.aliases) == {"maria", "mary"}
    twin.refresh_from_db()
    assert twin.valid_to is not None and twin.closed_reason.startswith("merged into relation")
    assert Relation.objects.get(pk=moved.pk).subject_id == kept.pk
    assert [entity.pk for entity in entities_list(agent=agent, user=end_user, query="mar")] == [kept.pk]
    assert list(entity_facts(entity=kept)) == [mary_fact, fact]  # the merged entity's facts come with it
    with pytest.raises(ApplicationError):
        entity_merge(kept=maria, merged=user_entity)


def test_rename_keeps_the_old_name_as_an_alias(agent, end_user):
    entity = relation_stated_by_new_fact(
        agent=agent,
        user=end_user,
        content="Acme makes anvils",
        subject=EntityMention("Acme"),
        predicate="makes",
        value="anvils",
    ).subject

    renamed = entity_rename(entity=entity, name="Acme Corporation")

    assert renamed.name == "Acme Corporation" and {"acme", "acme corporation"} <= set(renamed.aliases)
    assert list(entities_list(agent=agent, user=end_user, query="ACME")) == [renamed]
    assert not entities_list(agent=agent, user=end_user, query="globex").exists()


def test_erasing_a_user_removes_their_entities_and_relations_only(agent, end_user):
    other = EndUserFactory(agent=agent, external_id="user-2")
    for user in (end_user, other):
        fact = _fact(agent, user, "Maria is the user's sister")
        fact_relations_write(fact=fact, statements=[SISTER], source_messages=[])

    record = user_erase(user=end_user, requested_by="test")

    assert not Entity.objects.filter(user_id=end_user.pk).exists()
    assert not Relation.objects.filter(user_id=end_user.pk).exists()
    assert Entity.objects.filter(user=other).count() == 2 and Relation.objects.filter(user=other).count() == 1
    assert record.deleted_counts["facts.Entity"] == 2 and record.deleted_counts["facts.Relation"] == 1


def test_a_users_names_are_an_id_that_reads_as_a_name_and_their_metadata_name(agent):
    def names(external_id: str, metadata: object = None) -> frozenset[str]:
        return user_names(user=EndUserFactory(agent=agent, external_id=external_id, metadata=metadata or {}))

    assert names("Jean-Luc Picard") == {"jean-luc picard"}
    assert names("u-5", {"name": "Ana Lima"}) == {"ana lima"}
    assert names("ana@example.com") == names("4f1c9e0a-77b2") == names("user") == frozenset()
    assert names("u-6", ["not", "a", "mapping"]) == frozenset()
