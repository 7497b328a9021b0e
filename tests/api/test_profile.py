"""GET /api/v1/users/{user_id}/profile and GET /api/v1/profile: what memory holds by category, with the sources and
world time of each entry, history on request; 400 naming the field for an unknown category, 404 for a user the key
cannot see."""

from __future__ import annotations

import pytest

from facts.services.facts import fact_profile_set
from facts.world_time import TimePrecision, WorldTime
from tests.api_support import api_client_for
from tests.category_support import fact_filed
from tests.factories import AgentFactory, EndUserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def filed(agent, end_user):
    return {
        "pottery": fact_filed(agent, end_user, "The user does pottery", "activities", "pottery"),
        "globex": fact_filed(
            agent,
            end_user,
            "The user used to work at Globex",
            "work",
            "Globex",
            world_time=WorldTime(end_precision=TimePrecision.UNKNOWN),
        ),
        "shared": fact_filed(agent, None, "Every user gets a free coffee", "likes", "coffee"),
    }


def test_a_users_profile_by_category_with_sources_world_time_and_attributes(api, agent, end_user, filed):
    fact_profile_set(agent=agent, user=end_user, key="home_city", content="The user lives in Denver.", value="Denver")

    response = api.get(f"/api/v1/users/{end_user.external_id}/profile")

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["user"] == end_user.external_id and body["truncated"] is False
    assert [category["category"] for category in body["categories"]] == ["activities"], "ended work is history"
    activities = body["categories"][0]
    assert activities["name"] == "Activities and hobbies" and "history" not in activities
    entry = activities["entries"][0]
    assert (entry["value"], entry["mentions"]) == ("pottery", 1)
    assert entry["world_time"]["holds_now"] is True and entry["last_mentioned"]
    assert [fact["id"] for fact in entry["facts"]] == [filed["pottery"].pk]
    assert body["attributes"] == [
        {"key": "home_city", "value": "Denver", "memory_id": body["attributes"][0]["memory_id"]}
    ]


def test_history_and_a_category_filter(api, end_user, filed):
    response = api.get(f"/api/v1/users/{end_user.external_id}/profile?category=work,places&include_history=true")

    assert response.status_code == 200, response.json()
    [work] = response.json()["categories"]
    assert (work["category"], work["entries"]) == ("work", [])
    assert [entry["value"] for entry in work["history"]] == ["Globex"]
    assert work["history"][0]["world_time"]["end_precision"] == "unknown"


def test_the_agent_wide_profile(api, filed):
    response = api.get("/api/v1/profile")

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["user"] is None and body["attributes"] == []
    assert [(c["category"], [e["value"] for e in c["entries"]]) for c in body["categories"]] == [("likes", ["coffee"])]


def test_an_unknown_category_is_a_400_naming_the_field(api, end_user, filed):
    response = api.get(f"/api/v1/users/{end_user.external_id}/profile?category=activities,astrology")

    assert response.status_code == 400
    assert "category" in response.json()["error"]["fields"]
    assert api.get("/api/v1/profile?include_history=perhaps").json()["error"]["fields"].keys() == {"include_history"}
    assert "category" in api.get("/api/v1/profile?category=,,").json()["error"]["fields"]


def test_a_user_the_key_cannot_see_is_a_404(api, filed):
    other_agent = AgentFactory(name="Another agent")
    stranger = EndUserFactory(agent=other_agent, external_id="stranger")
    fact_filed(other_agent, stranger, "The user does karate", "activities", "karate")

    response = api.get("/api/v1/users/stranger/profile")

    assert response.status_code == 404
    assert response.json()["error"]["fields"] == {"user": ["not found"]}
    assert api_client_for(other_agent).get("/api/v1/users/stranger/profile").status_code == 200
