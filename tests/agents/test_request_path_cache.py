"""The per-process caches of the request path (core/runtime/request_path_cache.py): API keys with their agent, end
users, the active embedding space. Whatever changes them, in this process or another one, is seen on the next
request; searches return what they returned uncached."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import numpy as np
import pytest
from django.conf import settings
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext

from agents.models import Agent
from agents.services.api_keys import api_key_create, api_key_revoke
from facts.services.facts import fact_create
from portability.services.erasure import user_erase
from tests.conftest import REPO_DIR, database_url_of_test_database
from tests.factories import EndUserFactory
from tests.reembed_support import (
    MARKER,
    QUERY,
    STUB_DIMENSIONS,
    bag_of_words_vector,
    memory_to_reembed_create,
    reembed_to_stub,
)

# What a search reads that does not depend on its query: the key (with its agent), the end user, the active space.
QUERY_INDEPENDENT_READS = (
    'FROM "conversations_agentapikey"',
    'FROM "conversations_enduser"',
    'FROM "core_embeddingspace"',
)


@pytest.fixture
def key_and_api(agent) -> tuple[str, Client]:
    _, raw_key = api_key_create(agent=agent, name="test")
    return raw_key, Client(HTTP_AUTHORIZATION=f"Bearer {raw_key}")


def _search(api: Client, body: dict):
    return api.post("/api/v1/memory/search", body, content_type="application/json")


def _statements_of_search(api: Client, body: dict) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        response = _search(api, body)
    assert response.status_code == 200, response.json()
    return [query["sql"] for query in queries.captured_queries]


def _in_another_process(*args: str) -> None:
    subprocess.run(
        [sys.executable, str(REPO_DIR / "manage.py"), *args],
        env=os.environ | {"DATABASE_URL": database_url_of_test_database()},
        cwd=REPO_DIR,
        check=True,
        capture_output=True,
        timeout=120,
    )


@pytest.mark.django_db
def test_a_repeated_search_reads_only_the_facts(key_and_api, agent, end_user):
    _, api = key_and_api
    fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene plays the cello")
    body = {"query": "What does Gene play?", "user": end_user.external_id}

    first = _statements_of_search(api, body)
    repeated = _statements_of_search(api, body)

    assert all(any(read in sql for sql in first) for read in QUERY_INDEPENDENT_READS)
    assert not [sql for sql in repeated if any(read in sql for read in QUERY_INDEPENDENT_READS)]
    first_use_recorded = [sql for sql in first if sql.startswith('UPDATE "conversations_agentapikey"')]
    assert len(repeated) == len(first) - len(QUERY_INDEPENDENT_READS) - len(first_use_recorded)


@pytest.mark.django_db
def test_a_revoked_key_is_refused_on_the_next_request(key_and_api, agent, end_user):
    raw_key, api = key_and_api
    assert _search(api, {"query": "anything", "user": end_user.external_id}).status_code == 200

    api_key_revoke(api_key=agent.api_keys.get())

    response = _search(api, {"query": "anything", "user": end_user.external_id})
    assert response.status_code == 401
    assert Client(HTTP_X_API_KEY=raw_key).get("/api/v1/sessions/none").status_code == 401


@pytest.mark.django_db(transaction=True)
def test_a_key_revoked_in_another_process_is_refused_on_the_next_request(key_and_api, agent, end_user):
    _, api = key_and_api
    body = {"query": "anything", "user": end_user.external_id}
    _search(api, body)
    assert not [sql for sql in _statements_of_search(api, body) if 'FROM "conversations_agentapikey"' in sql]  # cached

    _in_another_process("api_key", "revoke", agent.api_keys.get().prefix)

    assert _search(api, body).status_code == 401


@pytest.mark.django_db(transaction=True)
def test_an_agent_change_in_another_process_is_seen_on_the_next_request(key_and_api, agent, end_user):
    _, api = key_and_api
    body = {"query": "anything", "user": end_user.external_id}
    _search(api, body)
    assert not [sql for sql in _statements_of_search(api, body) if 'FROM "conversations_agentapikey"' in sql]  # cached

    _in_another_process(
        "shell",
        "-c",
        "from agents.models import Agent; "
        f"agent = Agent.objects.get(pk={agent.pk}); agent.rag_enabled = False; agent.save()",
    )

    response = _search(api, body)
    assert response.status_code == 403, response.json()


@pytest.mark.django_db
def test_an_agent_settings_change_is_seen_on_the_next_request(key_and_api, agent, end_user):
    _, api = key_and_api
    body = {"query": "anything", "user": end_user.external_id}
    assert _search(api, body).status_code == 200

    agent.rag_enabled = False
    agent.save()
    assert _search(api, body).status_code == 403

    Agent.objects.get(pk=agent.pk).delete()
    assert _search(api, body).status_code == 401


@pytest.mark.django_db
def test_an_erased_user_is_gone_and_a_new_user_of_the_same_id_is_found(key_and_api, agent, end_user):
    _, api = key_and_api
    fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene plays the cello")
    body = {"query": "What does Gene play?", "user": end_user.external_id}
    assert [hit["fact"]["content"] for hit in _search(api, body).json()["results"]] == ["Gene plays the cello"]

    user_erase(user=end_user, requested_by="test")
    assert _search(api, body).json()["results"] == []

    again = EndUserFactory(agent=agent, external_id=end_user.external_id)
    fact_create(agent=agent, user=again, scopes=["user"], content="Gene plays the oboe now")
    results = _search(api, body).json()["results"]
    assert [(hit["fact"]["content"], hit["fact"]["user"]) for hit in results] == [
        ("Gene plays the oboe now", end_user.external_id)
    ]


@pytest.mark.django_db
def test_search_results_are_the_same_cached_and_uncached(key_and_api, agent, end_user, settings):
    _, api = key_and_api
    other = EndUserFactory(agent=agent, external_id="user-2")
    for content in ("Gene plays the cello", "Gene's sister lives in Porto", "Gene is vegetarian"):
        fact_create(agent=agent, user=end_user, scopes=["user"], content=content)
    fact_create(agent=agent, user=other, scopes=["user"], content="Ana plays the violin")
    fact_create(agent=agent, user=None, scopes=["agent"], content="Support is open 9am to 5pm CET")
    queries = [
        {"query": "What instrument does Gene play?", "user": "user-1"},
        {"query": "When is support open?", "user": "user-2", "top_k": 2},
        {"query": "Porto", "mode": "text"},
    ]

    settings.REQUEST_PATH_CACHE_SECONDS = 0
    uncached = [_search(api, body).json() for body in queries]
    settings.REQUEST_PATH_CACHE_SECONDS = 60
    cold, warm = ([_search(api, body).json() for body in queries] for _ in range(2))

    assert all(response["results"] for response in uncached)
    assert cold == uncached and warm == uncached


@pytest.mark.django_db(transaction=True)
def test_searches_use_the_new_space_after_areembed_to_stub(key_and_api, agent, end_user, embedding_stub):
    _, api = key_and_api
    memory_to_reembed_create(agent, end_user)
    body = {"query": QUERY, "user": end_user.external_id, "mode": "semantic", "top_k": 1}
    before = _search(api, body).json()["results"]
    assert before[0]["fact"]["content"] == MARKER

    reembed_to_stub("--retire-grace-seconds", "0")

    after = _search(api, body).json()["results"]
    expected_similarity = float(
        np.dot(bag_of_words_vector(QUERY, STUB_DIMENSIONS), bag_of_words_vector(MARKER, STUB_DIMENSIONS))
    )
    assert after[0]["fact"]["content"] == MARKER
    assert after[0]["similarity"] == pytest.approx(expected_similarity, abs=1e-4)
    assert after[0]["similarity"] != pytest.approx(before[0]["similarity"], abs=1e-4)


@pytest.mark.django_db
def test_while_redis_is_unreachable_nothing_is_cached_and_a_revoked_key_is_refused(key_and_api, agent, end_user):
    _, api = key_and_api
    body = {"query": "anything", "user": end_user.external_id}
    _search(api, body)
    assert not [sql for sql in _statements_of_search(api, body) if 'FROM "conversations_agentapikey"' in sql]  # cached
    unreachable = {"default": {**settings.CACHES["default"], "LOCATION": f"redis://127.0.0.1:{_closed_port()}/1"}}

    with override_settings(CACHES=unreachable):
        assert [sql for sql in _statements_of_search(api, body) if 'FROM "conversations_agentapikey"' in sql]
        api_key_revoke(api_key=agent.api_keys.get())  # the invalidation is lost with Redis
        assert _search(api, body).status_code == 401


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
