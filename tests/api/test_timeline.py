"""GET /api/v1/users/{user_id}/timeline and /api/v1/entities/{entity_id}/timeline: what changed, in world-time order,
with the sources; pages by cursor; filters in world time; 404 for what the key cannot see; 400 naming the field for
bad input. The isolation matrix (tests/hardening/test_isolation.py) walks both operations too."""

from __future__ import annotations

from datetime import date

import pytest

from facts.models import Entity, FactScope
from facts.services.facts import fact_create, fact_world_end
from facts.world_time import TimePrecision, WorldTime
from tests.api_support import api_client_for
from tests.factories import AgentFactory, EndUserFactory, MessageFactory, SessionFactory
from tests.graph_support import GLOBEX, MARIA, relation_stated

pytestmark = pytest.mark.django_db


@pytest.fixture
def moved(agent, end_user):
    """Denver from 2019, ended in May 2023 (said in a message), then Boulder."""
    denver = fact_create(
        agent=agent,
        user=end_user,
        scopes=[FactScope.USER],
        content="The user lives in Denver",
        world_time=WorldTime(start=date(2019, 1, 1), start_precision="year"),
    )
    message = MessageFactory(session=SessionFactory(user=end_user, external_id="chat-9"), content="I moved to Boulder")
    ended = fact_world_end(
        fact=denver, end=date(2023, 5, 1), end_precision=TimePrecision.MONTH, reason="moved", source_messages=[message]
    )
    fact_create(
        agent=agent,
        user=end_user,
        scopes=[FactScope.USER],
        content="The user lives in Boulder",
        world_time=WorldTime(start=date(2023, 5, 1), start_precision="month"),
    )
    return {"denver": denver, "ended": ended, "message": message}


def test_a_users_timeline_says_what_happened_when_with_its_sources(api, end_user, moved):
    response = api.get(f"/api/v1/users/{end_user.external_id}/timeline")

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["next"] is None
    assert [(e["fact"]["content"], e["happened"], e["at"], e["placed_by"]) for e in body["results"]] == [
        ("The user lives in Denver", "started", "2019-01-01", "start"),
        ("The user lives in Denver", "ended", "2023-05-01", "end"),
        ("The user lives in Boulder", "started", "2023-05-01", "start"),
    ]
    ending = body["results"][1]
    assert ending["fact"] | {"lineage": None} == {
        "id": moved["ended"].pk,
        "content": "The user lives in Denver",
        "version": 2,
        "lineage": None,
        "is_current": True,
        "scopes": ["user"],
        "user": end_user.external_id,
        "key": "",
    }
    assert ending["world_time"] == {
        "start": "2019-01-01",
        "start_precision": "year",
        "end": "2023-05-01",
        "end_precision": "month",
        "holds_now": False,
    }
    assert ending["reason"] == "moved" and ending["recorded_at"]
    assert ending["source_messages"] == [
        {"id": moved["message"].pk, "session": "chat-9", "said_at": ending["source_messages"][0]["said_at"]}
    ]


def test_pages_follow_next_and_world_time_filters(api, agent, end_user):
    for year in range(2001, 2008):
        fact_create(
            agent=agent,
            user=end_user,
            scopes=[FactScope.USER],
            content=f"The user changed something in {year}",
            world_time=WorldTime(start=date(year, 1, 1), start_precision="year"),
        )
    years, url = [], f"/api/v1/users/{end_user.external_id}/timeline?page_size=3"
    while url:
        page = api.get(url).json()
        years += [int(entry["at"][:4]) for entry in page["results"]]
        url = page["next"]
    window = api.get(
        f"/api/v1/users/{end_user.external_id}/timeline", {"time_from": "2003-01-01", "time_to": "2004-12-31"}
    ).json()

    assert years == list(range(2001, 2008))
    assert [entry["at"] for entry in window["results"]] == ["2003-01-01", "2004-01-01"]


def test_an_entitys_timeline(api, agent, end_user):
    job = fact_create(
        agent=agent,
        user=end_user,
        scopes=[FactScope.USER],
        content="Maria works at Globex",
        world_time=WorldTime(start=date(2021, 3, 1), start_precision="month"),
    )
    relation_stated(fact=job, subject=MARIA, predicate="works_at", object=GLOBEX)
    fact_world_end(fact=job, end=None, end_precision=TimePrecision.UNKNOWN, reason="she left")
    maria = Entity.objects.get(agent=agent, name="Maria")

    body = api.get(f"/api/v1/entities/{maria.pk}/timeline").json()

    assert [(e["happened"], e["placed_by"], e["world_time"]["end_precision"]) for e in body["results"]] == [
        ("started", "start", ""),
        ("ended", "recorded", "unknown"),
    ]


def test_what_the_key_cannot_see_is_not_found(api, agent, end_user, moved):
    other = AgentFactory()
    stranger = EndUserFactory(agent=other, external_id="stranger")
    fact_create(agent=other, user=stranger, scopes=[FactScope.USER], content="Maria works at Globex")

    assert api.get("/api/v1/users/nobody-yet/timeline").status_code == 404
    assert api.get("/api/v1/users/stranger/timeline").status_code == 404
    assert api.get(f"/api/v1/users/{'x' * 201}/timeline").status_code == 404
    assert api.get("/api/v1/entities/999999999/timeline").status_code == 404
    assert api_client_for(other).get(f"/api/v1/users/{end_user.external_id}/timeline").status_code == 404


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"time_from": "2023-13-01"}, "time_from"),
        ({"time_to": "yesterday"}, "time_to"),
        ({"time_from": "2024-01-01", "time_to": "2023-01-01"}, "time_to"),
        ({"page_size": "0"}, "page_size"),
        ({"page_size": "201"}, "page_size"),
        ({"cursor": "bm90IGEgY3Vyc29y"}, "cursor"),
        ({"cursor": "!!!"}, "cursor"),
        ({"cursor": "WyIyMDIzLTAxLTAxIiwiMjAyMy0wMS0wMVQwMDowMDowMCIsMSwwXQ"}, "cursor"),  # a naive datetime
    ],
)
def test_bad_filters_are_a_400_naming_the_field(api, end_user, moved, query, field):
    response = api.get(f"/api/v1/users/{end_user.external_id}/timeline", query)

    assert response.status_code == 400, response.json()
    assert field in response.json()["error"]["fields"]
