"""/metrics in this process (no PROMETHEUS_MULTIPROC_DIR): who may read it, what it says, and that its labels stay
bounded however many agents, users, sessions and texts pass through. The real Prometheus scraping a multi-process
stack is tests/observability/test_prometheus_scrape.py."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from agents.models import Agent
from agents.services.api_keys import api_key_create
from conversations.models import Session
from facts.services.facts import fact_create
from formation.models import HeldMemory
from tests.factories import AgentFactory

TOKEN = "a-scraper-token-of-some-length"


def _scrape(client: Client | None = None, **headers) -> dict[str, list]:
    response = (client or Client(HTTP_AUTHORIZATION=f"Bearer {TOKEN}")).get("/metrics", **headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    return {family.name: family.samples for family in text_string_to_metric_families(response.content.decode())}


def _series(families: dict[str, list], prefix: str = "memory_") -> set[tuple]:
    return {
        (sample.name, tuple(sorted(sample.labels.items())))
        for name, samples in families.items()
        if name.startswith(prefix)
        for sample in samples
    }


@pytest.fixture
def metrics_token(settings):
    settings.METRICS_BEARER_TOKEN = TOKEN
    settings.METRICS_ALLOWED_NETWORKS = []


@pytest.mark.django_db
def test_metrics_refuse_callers_without_the_token_and_api_keys_do_not_open_them(settings, agent):
    settings.METRICS_BEARER_TOKEN, settings.METRICS_ALLOWED_NETWORKS = "", []
    closed = Client().get("/metrics")
    assert closed.status_code == 403
    assert "METRICS_BEARER_TOKEN" in closed.json()["error"]["message"]

    settings.METRICS_BEARER_TOKEN = TOKEN
    anonymous = Client().get("/metrics")
    assert anonymous.status_code == 401 and anonymous["WWW-Authenticate"] == 'Bearer realm="metrics"'
    assert anonymous.json()["error"]["code"] == "not_authenticated"
    assert Client(HTTP_AUTHORIZATION="Bearer wrong-token").get("/metrics").status_code == 401
    _, api_key = api_key_create(agent=agent, name="an agent's key")
    assert Client(HTTP_AUTHORIZATION=f"Bearer {api_key}").get("/metrics").status_code == 401
    assert Client(HTTP_AUTHORIZATION=f"Bearer {TOKEN}").get("/metrics").status_code == 200


@pytest.mark.django_db
def test_an_allowed_network_reads_without_a_token_and_others_do_not(settings):
    settings.METRICS_BEARER_TOKEN, settings.METRICS_ALLOWED_NETWORKS = "", ["10.1.0.0/16", "::1/128"]
    assert Client(REMOTE_ADDR="10.1.2.3").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="::1").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="10.2.0.1").get("/metrics").status_code == 403
    # A forwarded header is anyone's to write: the connection's own address decides.
    assert Client(REMOTE_ADDR="10.2.0.1", HTTP_X_FORWARDED_FOR="10.1.2.3").get("/metrics").status_code == 403


def _traffic(*, agent: Agent, rounds: int, marker: str) -> set[str]:
    """Requests for `rounds` new users and sessions, each with its own text; returns every id and text used."""
    _, key = api_key_create(agent=agent, name="load")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {key}")
    used = set()
    for index in range(rounds):
        user, session = f"user-{marker}-{index}", f"session-{marker}-{index}"
        text = f"My {marker} number {index} is the zebra-{uuid.uuid4().hex[:8]}"
        used |= {user, session, text, text.split()[-1]}
        response = api.post(
            f"/api/v1/sessions/{session}/messages",
            {"user": user, "messages": [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]},
            content_type="application/json",
        )
        assert response.status_code == 201, response.content
        fact_create(agent=agent, user=None, content=f"The {marker} of {user} is {index}", scopes=["agent"])
        search = api.post("/api/v1/memory/search", {"query": text, "user": user}, content_type="application/json")
        assert search.status_code == 200, search.content
        assert api.get(f"/api/v1/sessions/{session}", {"user": user}).status_code in (200, 404)
        assert api.get(f"/api/v1/sessions/no-such-{marker}-{index}/nothing").status_code == 404
    return used


@pytest.mark.django_db
def test_labels_stay_bounded_and_carry_no_ids_or_text(metrics_token, agent):
    AgentFactory(external_id=f"agent-quiet-{uuid.uuid4().hex[:6]}")
    used = _traffic(agent=agent, rounds=2, marker="warm")
    before = _series(_scrape())
    used |= _traffic(agent=agent, rounds=8, marker="more")
    families = _scrape()
    after = _series(families)

    # Eight more users, sessions and texts add no series: every label value comes from the code.
    assert after - before == set(), sorted(after - before)
    label_values = {value for _, labels in after for _, value in labels}
    leaked = {value for value in label_values for secret in used if secret in value}
    assert leaked == set()
    assert not any("user-" in value or "session-" in value or "zebra" in value for value in label_values)
    routes = {dict(labels).get("route") for name, labels in after if name == "memory_http_requests_total"}
    assert "api/v1/sessions/<str:session_id>/messages" in routes and "unmatched" in routes
    stages = {dict(labels)["stage"] for name, labels in after if name == "memory_search_stage_duration_seconds_count"}
    assert {"text_sql", "vector_sql", "serialize"} <= stages


@pytest.mark.django_db(transaction=True)  # counters of committed work count on commit
def test_the_families_of_the_issue_are_exported(metrics_token, agent, end_user):
    _traffic(agent=agent, rounds=1, marker="families")
    Session.objects.create(agent=agent, user=end_user, external_id="waiting", formation_status="waiting",
                           formation_waiting_reason="agent_budget")  # fmt: skip
    families = _scrape()

    for name in (
        "memory_http_requests",
        "memory_http_request_duration_seconds",
        "memory_search_stage_duration_seconds",
        "memory_ingested_messages",
        "memory_embedding_duration_seconds",
        "memory_formation_backlog_sessions",
        "memory_formation_lag_seconds",
        "memory_llm_spent_today_tokens",
        "memory_llm_daily_budget_tokens",
        "memory_review_queue_pending",
        "memory_review_queue_oldest_age_seconds",
        "memory_embedding_backlog",
        "memory_metrics_collector_up",
    ):
        assert name in families, name
    assert all(sample.value == 1 for sample in families["memory_metrics_collector_up"])
    backlog = {tuple(sorted(s.labels.items())): s.value for s in families["memory_formation_backlog_sessions"]}
    assert backlog[(("reason", "agent_budget"), ("status", "waiting"))] == 1
    ingested = {s.labels["role"]: s.value for s in families["memory_ingested_messages"] if s.name.endswith("_total")}
    assert ingested["user"] >= 1 and ingested["assistant"] >= 1
    assert HeldMemory.objects.count() == 0


@pytest.mark.django_db
def test_metrics_off_answer_404_and_count_nothing(settings, metrics_token):
    from core.observability.instruments import llm_call_observe
    from core.observability.metrics import llm_calls

    settings.METRICS_ENABLED = False
    before = llm_calls.labels("test", "off-check", "ok")._value.get()
    llm_call_observe(
        provider="test", purpose="off-check", outcome="ok", prompt_tokens=1, completion_tokens=1, latency_ms=1
    )
    assert llm_calls.labels("test", "off-check", "ok")._value.get() == before
    response = Client(HTTP_AUTHORIZATION=f"Bearer {TOKEN}").get("/metrics")
    assert response.status_code == 404 and "METRICS_ENABLED" in response.json()["error"]["message"]
