"""The rerank step as the API shows it: each hit's `rerank_rank` and `rerank_score` (null when not reranked), its time
as the Server-Timing stage `rerank` and in the stage histogram, on fact search and turn search; the agent's setting
over the administration API."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from prometheus_client import REGISTRY

from agents.models import Agent
from agents.services.operator_keys import operator_key_create
from conversations.services.message_embeddings import messages_embed_missing
from facts.services.facts import fact_create
from tests.factories import MessageFactory
from tests.facts.search_support import FILLER
from tests.rerank_server_support import RerankServer

pytestmark = pytest.mark.django_db


@pytest.fixture
def server(settings) -> Iterator[RerankServer]:
    with RerankServer().running() as running:
        settings.RERANK_URL = running.url("/v1/rerank")
        settings.RERANK_API_FORMAT = "cohere"
        yield running


def _stage_count() -> float:
    return sum(
        sample.value
        for family in REGISTRY.collect()
        if family.name == "memory_search_stage_duration_seconds"
        for sample in family.samples
        if sample.name.endswith("_count") and sample.labels.get("stage") == "rerank"
    )


def _stages(response) -> set[str]:
    return {part.split(";")[0].strip() for part in response["Server-Timing"].split(",")}


def test_the_reranker_is_set_over_the_administration_api_and_rejects_other_values(client, agent):
    _, key = operator_key_create(name="tests")
    headers = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    url = f"/api/v1/admin/agents/{agent.external_id}"

    bad = client.patch(url, json.dumps({"reranker": "cohere"}), "application/json", **headers)
    assert bad.status_code == 400 and "reranker" in bad.json()["error"]["fields"]
    assert Agent.objects.get(pk=agent.pk).reranker == "off"

    changed = client.patch(url, json.dumps({"reranker": "http"}), "application/json", **headers)
    assert changed.status_code == 200 and changed.json()["reranker"] == "http"
    assert Agent.objects.get(pk=agent.pk).reranker == "http"


def test_fact_search_says_what_the_reranker_did_and_its_time(api, agent, end_user, server):
    for content in FILLER:
        fact_create(agent=agent, user=end_user, scopes=["user"], content=content)
    body = {"query": "What instrument does the user play?", "user": end_user.external_id}

    off = api.post("/api/v1/memory/search", body, content_type="application/json")
    assert off.status_code == 200
    assert all(hit["rerank_rank"] is None and hit["rerank_score"] is None for hit in off.json()["results"])
    assert "rerank" not in _stages(off)

    agent.reranker = "http"
    agent.save(update_fields=["reranker"])
    before = _stage_count()
    on = api.post("/api/v1/memory/search", body, content_type="application/json")

    results = on.json()["results"]
    assert [hit["rerank_rank"] for hit in results] == list(range(1, len(results) + 1))
    assert all(isinstance(hit["rerank_score"], float) for hit in results)
    assert "rerank" in _stages(on)
    assert _stage_count() == before + 1


def test_turn_search_says_what_the_reranker_did_and_its_time(api, agent, end_user, session, server):
    messages = [
        MessageFactory(session=session, content=content)
        for content in ("I play the cello on Sundays", "The train was late again", "My cello teacher is strict")
    ]
    messages_embed_missing(message_ids=[message.pk for message in messages])
    agent.reranker = "http"
    agent.save(update_fields=["reranker"])

    response = api.post(
        "/api/v1/messages/search",
        {"query": "cello lessons", "user": end_user.external_id},
        content_type="application/json",
    )

    assert response.status_code == 200, response.json()
    results = response.json()["results"]
    assert results and results[0]["rerank_rank"] == 1 and isinstance(results[0]["rerank_score"], float)
    assert "rerank" in _stages(response)
