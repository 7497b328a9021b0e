"""The get_entity tool ("what do you know about X") through POST /api/v1/tools/call: an entity found by any of its
names with its current relations, its ended ones on request, and the facts that state them; the user's own entities
only for that user, the agent-wide ones for everyone; bounded in size; the model's mistakes as tool errors."""

from __future__ import annotations

from datetime import date

import pytest
from django.test import Client

from agents.models import Agent
from facts.models import EntityType, FactScope
from facts.services.facts import fact_create
from facts.services.graph import EntityMention, RelationStatement, StatedRelations, relations_write
from facts.world_time import WorldTime
from formation.tools.get_entity import ENTITY_TOOL_MAX_FACTS, ENTITY_TOOL_MAX_RELATIONS
from tests.api_support import api_client_for
from tests.factories import AgentFactory, EndUserFactory
from tests.graph_support import relation_stated, relation_stated_by_new_fact, sister_graph_create

pytestmark = pytest.mark.django_db


def _get_entity(api: Client, arguments, **conversation) -> dict:
    response = api.post(
        "/api/v1/tools/call",
        {"name": "get_entity", "arguments": arguments} | conversation,
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    return response.json()


def test_an_entity_is_found_by_an_alias_with_its_current_relations_and_facts(api, agent, end_user):
    sister_graph_create(agent=agent, user=end_user)

    answer = _get_entity(api, '{"name": "MIA"}', user=end_user.external_id)

    assert answer["ok"], answer
    result = answer["result"]
    assert result["found"] is True
    assert result["entity"] == {"name": "Maria", "type": "person", "aliases": ["mia"], "is_this_user": False}
    assert sorted((item["subject"], item["predicate"], item["object"]) for item in result["relations"]) == [
        ("Maria", "age", "34"),
        ("Maria", "sister_of", "the user"),
        ("Maria", "works_at", "Globex"),
    ]
    assert "ended_relations" not in result
    assert {fact["content"] for fact in result["facts"]} == {
        "Maria is the user's sister",
        "Maria works at Globex",
        "Maria is 34 years old",
    }
    assert all("until" not in fact for fact in result["facts"])


def test_ended_relations_come_on_request_with_when_they_held(api, agent, end_user):
    graph = sister_graph_create(agent=agent, user=end_user)

    result = _get_entity(api, {"name": "Maria", "include_ended": True}, user=end_user.external_id)["result"]

    [ended] = result["ended_relations"]
    assert (ended["predicate"], ended["object"], ended["why_ended"]) == ("works_at", "Acme", "new job")
    assert ended["since"] <= ended["until"]
    closed = next(fact for fact in result["facts"] if fact["id"] == graph.old_job.pk)
    assert closed["content"] == "Maria works at Acme" and "until" in closed


def test_me_is_the_user_and_a_partial_name_finds_the_closest_entity(api, agent, end_user):
    sister_graph_create(agent=agent, user=end_user)
    relation_stated_by_new_fact(
        agent=agent,
        user=end_user,
        content="Globex Research Lab studies batteries",
        subject=EntityMention("Globex Research Lab", EntityType.ORGANISATION),
        predicate="studies",
        value="batteries",
    )

    me = _get_entity(api, {"name": "me"}, user=end_user.external_id)["result"]
    partial = _get_entity(api, {"name": "glob"}, user=end_user.external_id)["result"]

    assert me["entity"]["is_this_user"] is True
    assert [(item["subject"], item["predicate"]) for item in me["relations"]] == [("Maria", "sister_of")]
    assert partial["entity"]["name"] == "Globex" and partial["other_matches"] == ["Globex Research Lab"]
    assert sorted((item["subject"], item["predicate"], item["object"]) for item in partial["relations"]) == [
        ("Globex", "based_in", "Lyon"),
        ("Maria", "works_at", "Globex"),
    ]


def test_a_users_entities_are_theirs_alone_and_agent_wide_ones_are_everyones(api, agent, end_user):
    sister_graph_create(agent=agent, user=end_user)
    other_user = EndUserFactory(agent=agent)
    opening = fact_create(agent=agent, user=None, scopes=[FactScope.AGENT], content="The Zanzibar office opens at 9")
    office = EntityMention("Zanzibar office", EntityType.PLACE)
    relation_stated(fact=opening, subject=office, predicate="opens_at", value="9 am")
    other_agent = AgentFactory()
    EndUserFactory(agent=other_agent, external_id=end_user.external_id)

    for caller, conversation in [
        (api, {"user": other_user.external_id}),
        (api, {}),
        (api_client_for(other_agent), {"user": end_user.external_id}),
    ]:
        answer = _get_entity(caller, {"name": "Maria"}, **conversation)
        assert answer["ok"] and answer["result"]["found"] is False, answer
        assert "Maria is" not in str(answer)
    for conversation in [{"user": other_user.external_id}, {}, {"user": end_user.external_id}]:
        shared = _get_entity(api, {"name": "zanzibar office"}, **conversation)["result"]
        assert [fact["content"] for fact in shared["facts"]] == ["The Zanzibar office opens at 9"]
    assert _get_entity(api_client_for(other_agent), {"name": "zanzibar office"})["result"]["found"] is False


def test_a_well_known_entity_is_cut_to_a_bounded_answer_that_says_what_was_left_out(api, agent, end_user):
    hub = EntityMention("Club", EntityType.ORGANISATION)
    relations_write(
        stated=[
            StatedRelations(
                fact=fact_create(
                    agent=agent, user=end_user, scopes=[FactScope.USER], content=f"Member {number} is in Club"
                ),
                statements=[RelationStatement(EntityMention(f"Member {number}", EntityType.PERSON), "member_of", hub)],
            )
            for number in range(ENTITY_TOOL_MAX_RELATIONS + 5)
        ]
    )

    result = _get_entity(api, {"name": "club"}, user=end_user.external_id)["result"]

    assert len(result["relations"]) == ENTITY_TOOL_MAX_RELATIONS
    assert result["left_out"]["relations"] == 5
    assert len(result["facts"]) == ENTITY_TOOL_MAX_FACTS
    assert result["left_out"]["facts"] == ENTITY_TOOL_MAX_RELATIONS + 5 - ENTITY_TOOL_MAX_FACTS


@pytest.mark.parametrize(
    ("arguments", "hint"),
    [
        ({}, "name"),
        ({"name": ""}, "name"),
        ({"name": "Maria", "include_ended": "yes"}, "include_ended"),
        ({"name": "Maria", "hops": 2}, "unknown argument"),
    ],
)
def test_model_mistakes_are_tool_errors_naming_the_argument(api, end_user, arguments, hint):
    answer = _get_entity(api, arguments, user=end_user.external_id)

    assert answer["ok"] is False and hint in answer["error"]


def test_the_tool_is_off_with_the_agents_rag(api, agent, end_user):
    sister_graph_create(agent=agent, user=end_user)
    Agent.objects.filter(pk=agent.pk).update(rag_enabled=False)

    answer = _get_entity(api, {"name": "Maria"}, user=end_user.external_id)

    assert answer["ok"] is False and "switched off" in answer["error"]


def test_relations_say_when_they_held_in_the_world(api, agent, end_user):
    job = fact_create(
        agent=agent,
        user=end_user,
        scopes=[FactScope.USER],
        content="Maria works at Initech",
        world_time=WorldTime(start=date(2022, 9, 1), start_precision="month"),
    )
    relation_stated(
        fact=job,
        subject=EntityMention("Maria", EntityType.PERSON),
        predicate="works_at",
        object=EntityMention("Initech", EntityType.ORGANISATION),
    )

    result = _get_entity(api, {"name": "Maria"}, user=end_user.external_id)["result"]

    [relation] = result["relations"]
    assert (relation["held_from"], relation["holds_now"]) == ("2022-09", True) and "held_until" not in relation
    assert result["facts"][0]["held_from"] == "2022-09"
