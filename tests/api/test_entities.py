"""GET /api/v1/entities and /api/v1/entities/{id}: a user's entities searched by name, one entity with its relations
(current and ended) and facts; another agent's entity is not found; bad input is a 400 naming the field. The
schema-walked isolation matrix (tests/hardening/test_isolation.py) covers both operations too."""

from __future__ import annotations

import pytest

from facts.models import EntityType, FactScope
from facts.services.facts import fact_create, fact_supersede
from facts.services.graph import EntityMention, entity_merge
from tests.api_support import api_client_for
from tests.factories import AgentFactory, EndUserFactory
from tests.graph_support import USER, relation_stated, relation_stated_by_new_fact

pytestmark = pytest.mark.django_db


@pytest.fixture
def sister(agent, end_user):
    """Maria, the user's sister, who worked at Acme and now works at Globex."""
    maria = EntityMention("Maria", EntityType.PERSON, aliases=("Mia",))
    sister = relation_stated_by_new_fact(
        agent=agent,
        user=end_user,
        content="Maria is the user's sister",
        subject=maria,
        predicate="sister_of",
        object=USER,
    )
    job = fact_create(agent=agent, user=end_user, scopes=[FactScope.USER], content="Maria works at Acme")
    relation_stated(
        fact=job, subject=maria, predicate="works_at", object=EntityMention("Acme", EntityType.ORGANISATION)
    )
    new_job = fact_supersede(fact=job, content="Maria works at Globex", reason="new job")
    relation_stated(
        fact=new_job, subject=maria, predicate="works_at", object=EntityMention("Globex", EntityType.ORGANISATION)
    )
    return sister.subject


def test_a_users_entities_are_listed_and_searched_by_any_name(api, end_user, sister):
    everything = api.get("/api/v1/entities", {"user": end_user.external_id})
    by_alias = api.get("/api/v1/entities", {"user": end_user.external_id, "q": "mi"})

    assert everything.status_code == 200
    assert {item["name"] for item in everything.json()["results"]} == {"the user", "Maria", "Acme", "Globex"}
    assert [item["name"] for item in by_alias.json()["results"]] == ["Maria"]
    assert by_alias.json()["results"][0] | {"created_at": None, "updated_at": None} == {
        "id": sister.pk,
        "user": end_user.external_id,
        "name": "Maria",
        "entity_type": "person",
        "aliases": ["maria", "mia"],
        "is_user": False,
        "merged_into": None,
        "created_at": None,
        "updated_at": None,
    }
    assert api.get("/api/v1/entities", {"user": "nobody-yet"}).json()["results"] == []
    assert api.get("/api/v1/entities").json()["results"] == []  # no agent-wide entities


def test_the_list_pages_with_a_cursor(api, agent, end_user):
    for number in range(3):
        relation_stated_by_new_fact(
            agent=agent,
            user=end_user,
            content=f"Place {number} is in Portugal",
            subject=EntityMention(f"Place {number}", EntityType.PLACE),
            predicate="located_in",
            value="Portugal",
        )

    first = api.get("/api/v1/entities", {"user": end_user.external_id, "page_size": 2}).json()
    second = api.get(first["next"]).json()

    assert [item["name"] for item in first["results"] + second["results"]] == ["Place 2", "Place 1", "Place 0"]


def test_an_entity_shows_its_current_and_ended_relations_and_their_facts(api, sister):
    response = api.get(f"/api/v1/entities/{sister.pk}")

    assert response.status_code == 200
    data = response.json()
    assert data["entity"]["name"] == "Maria"
    relations = [
        (item["predicate"], item["object_entity"]["name"], item["is_current"], item["closed_reason"])
        for item in data["relations"]
    ]
    assert sorted(relations) == [
        ("sister_of", "the user", True, ""),
        ("works_at", "Acme", False, "new job"),
        ("works_at", "Globex", True, ""),
    ]
    assert {fact["content"] for fact in data["facts"]} == {
        "Maria is the user's sister",
        "Maria works at Acme",
        "Maria works at Globex",
    }
    ended = next(item for item in data["relations"] if not item["is_current"])
    assert ended["valid_to"] is not None and len(ended["source_facts"]) == 1


def test_a_merged_entity_points_at_the_one_kept(api, agent, end_user, sister):
    twin = relation_stated_by_new_fact(
        agent=agent,
        user=end_user,
        content="Maria Silva lives in Porto",
        subject=EntityMention("Maria Silva", EntityType.PERSON),
        predicate="lives_in",
        value="Porto",
    ).subject
    entity_merge(kept=sister, merged=twin)

    data = api.get(f"/api/v1/entities/{twin.pk}").json()

    assert data["entity"]["merged_into"] == sister.pk and data["relations"] == []
    names = [
        item["name"]
        for item in api.get("/api/v1/entities", {"user": end_user.external_id, "q": "silva"}).json()["results"]
    ]
    assert names == ["Maria"]


def test_another_agents_entity_is_not_found(sister):
    other = AgentFactory()
    EndUserFactory(agent=other, external_id="user-1")
    client = api_client_for(other)

    response = client.get(f"/api/v1/entities/{sister.pk}")
    listed = client.get("/api/v1/entities", {"user": "user-1"})

    assert response.status_code == 404 and "Maria" not in response.content.decode()
    assert response.json()["error"]["fields"] == {"id": ["not found"]}
    assert listed.json()["results"] == []


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"q": "x" * 201}, "q"),
        ({"user": "u" * 201}, "user"),
        ({"page_size": "0"}, "page_size"),
        ({"cursor": "not-a-cursor"}, "cursor"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(api, query, field):
    response = api.get("/api/v1/entities", query)

    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]


def test_an_unknown_entity_id_is_a_404(api):
    response = api.get("/api/v1/entities/999999")

    assert response.status_code == 404
    assert response.json()["error"]["fields"] == {"id": ["not found"]}
