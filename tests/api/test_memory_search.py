"""POST /api/v1/memory/search."""

import pytest
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from agents.models import Agent
from agents.services.api_keys import api_key_create
from facts.models import Fact
from facts.services.facts import fact_create, fact_supersede
from tests.factories import AgentFactory, EndUserFactory


@pytest.fixture
def facts(agent, end_user) -> dict[str, Fact]:
    other = EndUserFactory(agent=agent)
    stored = {
        "birthday": fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene's birthday is March 15th"),
        "plate": fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene's car plate is QX-4471"),
        "hours": fact_create(agent=agent, user=None, scopes=["agent"], content="Support is open 9am to 5pm CET"),
        "other": fact_create(agent=agent, user=other, scopes=["user"], content="Ana's birthday is June 2nd"),
    }
    for content in ("Gene is vegetarian", "Gene plays the cello", "Gene's sister lives in Porto"):
        fact_create(agent=agent, user=end_user, scopes=["user"], content=content)
    return stored


def _search(api: Client, body: dict):
    return api.post("/api/v1/memory/search", body, content_type="application/json")


@pytest.mark.django_db
def test_search_returns_ranked_hits_with_per_signal_ranks(api, facts):
    response = _search(api, {"query": "When was Gene born?", "user": "user-1", "top_k": 3})

    assert response.status_code == 200, response.json()
    results = response.json()["results"]
    assert results[0]["fact"]["id"] == facts["birthday"].pk
    assert results[0]["vector_rank"] == 1 and results[0]["similarity"] > 0.4
    assert {"score", "text_rank", "text_score", "time_rank"} <= set(results[0])
    assert results[0]["time_rank"] == 1  # asked when: the only fact naming a day (March 15th)
    assert results[0]["fact"]["user"] == "user-1" and results[0]["fact"]["version"] == 1
    assert facts["other"].pk not in [hit["fact"]["id"] for hit in results]


@pytest.mark.django_db
def test_text_mode_finds_a_rare_token(api, facts):
    results = _search(api, {"query": "QX-4471", "user": "user-1", "mode": "text"}).json()["results"]

    assert [hit["fact"]["id"] for hit in results] == [facts["plate"].pk]
    assert results[0]["text_rank"] == 1 and results[0]["vector_rank"] is None


@pytest.mark.django_db
def test_an_unknown_user_sees_only_agent_wide_facts(api, facts):
    response = _search(api, {"query": "birthday", "user": "never-seen", "top_k": 10})

    assert response.status_code == 200
    assert [hit["fact"]["id"] for hit in response.json()["results"]] == [facts["hours"].pk]


@pytest.mark.django_db
def test_history_and_as_of_are_passed_through(api, facts):
    moved = fact_supersede(fact=facts["birthday"], content="Gene's birthday is March 16th", reason="typo")
    as_of = facts["birthday"].valid_from.isoformat()

    current = _search(api, {"query": "Gene birthday", "user": "user-1", "mode": "text"}).json()["results"]
    history = _search(api, {"query": "Gene birthday", "user": "user-1", "mode": "text", "include_history": True})
    then = _search(api, {"query": "Gene birthday", "user": "user-1", "mode": "text", "as_of": as_of})

    # Full text matches any word: Gene's other facts follow on "Gene" alone, the versions come first.
    current_ids = [hit["fact"]["id"] for hit in current]
    history_ids = [hit["fact"]["id"] for hit in history.json()["results"]]
    then_ids = [hit["fact"]["id"] for hit in then.json()["results"]]
    assert current_ids[0] == moved.pk and facts["birthday"].pk not in current_ids
    assert set(history_ids[:2]) == {moved.pk, facts["birthday"].pk}
    assert then_ids[0] == facts["birthday"].pk and moved.pk not in then_ids


@pytest.mark.django_db
def test_another_agents_key_never_sees_these_facts(facts):
    stranger = AgentFactory()
    _, raw_key = api_key_create(agent=stranger)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {raw_key}")

    response = _search(client, {"query": "Gene birthday", "user": "user-1"})

    assert response.status_code == 200 and response.json()["results"] == []


@pytest.mark.django_db
def test_search_is_refused_when_rag_is_off(api, agent, facts):
    Agent.objects.filter(pk=agent.pk).update(rag_enabled=False)

    response = _search(api, {"query": "birthday", "user": "user-1"})

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "rag_disabled"
    assert "rag_enabled" in response.json()["error"]["message"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "query"),
        ({"query": ""}, "query"),
        ({"query": "x", "top_k": 0}, "top_k"),
        ({"query": "x", "top_k": 101}, "top_k"),
        ({"query": "x", "mode": "fuzzy"}, "mode"),
        ({"query": "x", "min_similarity": 2}, "min_similarity"),
        ({"query": "x", "mode": "text", "min_similarity": 0.5}, "min_similarity"),
        ({"query": "x", "recency_weight": 1.5}, "recency_weight"),
        ({"query": "x", "mmr_lambda": -1}, "mmr_lambda"),
        ({"query": "x", "scopes": ["session"]}, "scopes.0"),
        ({"query": "x", "as_of": "yesterday"}, "as_of"),
        ({"query": "x", "time_from": "May 2023"}, "time_from"),
        ({"query": "x", "time_from": 20230501}, "time_from"),
        ({"query": "x", "time_from": "2023-05-02", "time_to": "2023-05-01"}, "time_to"),
        ({"query": "x", "time_filter": "restrict"}, "time_filter"),
        ({"query": "x", "time_to": "2023-05-01", "time_filter": "nearby"}, "time_filter"),
    ],
)
def test_bad_search_input_names_the_field_and_changes_nothing(api, facts, body, field):
    counts = list(Fact.objects.order_by("pk").values_list("pk", "access_count"))

    response = _search(api, body)

    assert response.status_code == 400, response.json()
    assert field in response.json()["error"]["fields"], response.json()
    assert list(Fact.objects.order_by("pk").values_list("pk", "access_count")) == counts


def test_the_openapi_schema_documents_these_endpoints_with_examples():
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]

    for path in ("/api/v1/memory/search", "/api/v1/facts", "/api/v1/tools/call"):
        assert paths[path]["post"]["requestBody"]["content"]["application/json"]["examples"], path
    for path in ("/api/v1/facts/{fact_id}", "/api/v1/facts/{fact_id}/history", "/api/v1/tools", "/api/v1/blobs"):
        assert path in paths


@pytest.mark.django_db
def test_search_says_where_its_time_went_in_server_timing(api, facts):
    response = _search(api, {"query": "Which instrument does Gene play, asked once?", "user": "user-1"})

    assert response.status_code == 200
    stages = {
        name.strip(): float(duration)
        for name, duration in (part.split(";dur=") for part in response["Server-Timing"].split(","))
    }
    # The query embedding runs in a pool thread and is recorded with the request's stages all the same.
    assert {"embed", "text_sql", "embed_wait", "vector_sql", "fuse", "hits_sql", "serialize", "app"} <= set(stages)
    assert all(duration >= 0 for duration in stages.values())
    assert stages["app"] >= stages["text_sql"] + stages["vector_sql"] + stages["hits_sql"]
