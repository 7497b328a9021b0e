"""What the second hostile probe (issue 17) broke, replayed over real HTTP against a live server: each test is one
defect, as the probe reproduced it with curl, and fails on the code before its fix."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator

import httpx
import pytest
from django.conf import settings

from conversations.models import Session
from core.llm.tokens import count_tokens
from facts.models import Fact
from reflections.models import Reflection
from reflections.selectors.context import memory_context_get
from tests.factories import MessageFactory
from tests.formation_support import celery_workers_paused, wait_until
from tests.hardening.conftest import Tenant, Tenants, stored_rows_digest

LONG_ID = "s" * 201
HELLO = {"user": "alice", "messages": [{"role": "user", "content": "hi"}]}
MESSAGES = "/api/v1/sessions/alice-chat/messages"
ONE_MB_WORD = "w" * 1_048_576


@pytest.fixture
def http(live_server, tenants: Tenants) -> Iterator[httpx.Client]:
    """Agent A's key over HTTP. Requests never raise for a status: every answer is asserted on."""
    with httpx.Client(
        base_url=live_server.url, headers={"Authorization": f"Bearer {tenants.a.key}"}, timeout=60
    ) as client:
        yield client


def _error(response: httpx.Response) -> dict:
    assert response.headers["content-type"].startswith("application/json"), response.text[:300]
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "fields"}, body
    return body["error"]


def _cursor(query: str) -> str:
    return base64.b64encode(query.encode()).decode()


def test_a_session_id_in_the_path_longer_than_the_column_is_a_400_naming_session(http, tenants):
    before = stored_rows_digest()
    calls = [
        ("GET", f"/api/v1/sessions/{LONG_ID}", None),
        (
            "POST",
            f"/api/v1/sessions/{LONG_ID}/messages",
            {"user": "alice", "messages": [{"role": "user", "content": "hi"}]},
        ),
        ("GET", f"/api/v1/sessions/{LONG_ID}/messages", None),
        ("POST", f"/api/v1/sessions/{LONG_ID}/close", None),
        ("POST", f"/api/v1/sessions/{LONG_ID}/form", None),
    ]
    for method, path, body in calls:
        response = http.request(method, path, json=body)
        assert response.status_code == 400, (method, path, response.text[:300])
        assert "session" in _error(response)["fields"], (method, path)
    assert stored_rows_digest() == before

    at_the_limit = http.post(
        f"/api/v1/sessions/{'s' * 200}/messages",
        json={"user": "alice", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert at_the_limit.status_code == 201, at_the_limit.text


CURSOR_LISTS = [
    "/api/v1/facts",
    "/api/v1/reflections",
    "/api/v1/blobs",
    "/api/v1/documents",
    "/api/v1/sessions/alice-chat/messages",
]
GARBAGE_CURSORS = [
    _cursor("p=abc"),
    _cursor("p=1.5"),
    _cursor("p=%00"),
    _cursor("p=" + "9" * 30),
    _cursor("o=x&p=1"),
    _cursor("r=yes"),
    "not base64 at all!",
    "%ff%fe",
]


@pytest.mark.parametrize("path", CURSOR_LISTS)
def test_a_cursor_that_decodes_to_garbage_is_a_400_naming_cursor_on_every_list(http, path):
    for cursor in GARBAGE_CURSORS:
        response = http.get(path, params={"cursor": cursor})
        assert response.status_code == 400, (path, cursor, response.text[:300])
        assert "cursor" in _error(response)["fields"], (path, cursor)

    first = http.get(path, params={"page_size": 1})
    assert first.status_code == 200
    if first.json()["next"]:
        assert httpx.get(first.json()["next"], headers=http.headers).status_code == 200


def _nested_string(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


def test_json_nested_deep_inside_tool_call_arguments_is_a_400_naming_the_path(http):
    before = stored_rows_digest()
    for depth in (40, 5000, 200_000):
        response = http.post(
            "/api/v1/tools/call", json={"name": "save_memory", "arguments": _nested_string(depth), "user": "alice"}
        )
        assert response.status_code == 400, (depth, response.text[:300])
        fields = _error(response)["fields"]
        assert any(name.startswith("arguments.a.a.a") for name in fields), (depth, fields)

    nul = http.post(
        "/api/v1/tools/call", json={"name": "save_memory", "arguments": '{"content": "a\\u0000b"}', "user": "alice"}
    )
    assert nul.status_code == 400 and "arguments.content" in _error(nul)["fields"]
    nan = http.post("/api/v1/tools/call", json={"name": "search_memory", "arguments": '{"query": "x", "top_k": NaN}'})
    assert nan.status_code == 400 and "arguments.top_k" in _error(nan)["fields"]
    assert stored_rows_digest() == before
    # Not JSON at all is the model's mistake, which it can fix: a 200 telling it what is wrong.
    broken = http.post("/api/v1/tools/call", json={"name": "search_memory", "arguments": '{"query": '})
    assert broken.status_code == 200 and broken.json()["ok"] is False


def test_every_stored_text_has_a_character_limit(http, tenants):
    before = stored_rows_digest()
    writes = [
        ("POST", "/api/v1/facts", {"user": "alice", "content": ONE_MB_WORD}),
        ("PATCH", f"/api/v1/facts/{tenants.a.fact_ids[0]}", {"content": ONE_MB_WORD}),
        ("POST", "/api/v1/reflections", {"scope": "user", "user": "alice", "content": ONE_MB_WORD}),
        ("PATCH", f"/api/v1/blobs/{tenants.a.blob_ids[0]}", {"content": ONE_MB_WORD}),
        ("POST", "/api/v1/sessions/alice-chat/messages", {"messages": [{"role": "user", "content": ONE_MB_WORD}]}),
        ("POST", "/api/v1/documents", {"title": "t" * 301, "content": "fine"}),
        (
            "POST",
            "/api/v1/sessions/alice-chat/messages",
            {"messages": [{"role": "user", "content": "hi", "metadata": {"blob": "m" * 70_000}}]},
        ),
    ]
    for method, path, body in writes:
        response = http.request(method, path, json=body)
        assert response.status_code == 400, (method, path, response.text[:300])
        fields = _error(response)["fields"]
        assert any(name.endswith(("content", "title", "metadata")) for name in fields), (path, fields)
    saved = http.post(
        "/api/v1/tools/call", json={"name": "save_memory", "arguments": {"content": ONE_MB_WORD}, "user": "alice"}
    )
    assert saved.status_code == 200 and saved.json()["ok"] is False and "1000 characters" in saved.json()["error"]
    assert stored_rows_digest() == before


def _legacy_rows_with_a_1_mb_word(tenant: Tenant) -> None:
    """What the probe stored before the limits existed: a 1 MB fact and reflection, and a 100,000-character message
    (the message limit), written straight to the tables."""
    fact = Fact.objects.get(pk=tenant.fact_ids[0])
    Fact.objects.filter(pk=fact.pk).update(content=f"The user's code is {ONE_MB_WORD}")
    Reflection.objects.filter(pk=tenant.reflection_ids[1]).update(content=f"User likes {ONE_MB_WORD}")
    MessageFactory(session=tenant.session, content="remember " + "q" * 99_990, token_count=2)


@pytest.mark.parametrize("budget", [100, 2000])
def test_the_bundle_keeps_its_token_budget_whatever_the_stored_text(http, tenants, budget):
    _legacy_rows_with_a_1_mb_word(tenants.a)

    response = http.post(
        "/api/v1/memory/bundle",
        json={"query": "what is the code", "user": "alice", "session": "alice-chat", "token_budget": budget},
    )

    assert response.status_code == 200, response.text[:300]
    bundle = response.json()
    assert bundle["tokens_used"] <= budget
    assert count_tokens(bundle["text"]) <= budget
    assert len(bundle["text"]) <= 25 * budget  # every token stands for at most 25 characters (core/llm/tokens.py)
    assert bundle["parts"]["context"]["status"] == "over_budget"  # the 1 MB reflection is in the block
    assert bundle["parts"]["recent_turns"]["items"], "the long turn is shortened, never skipped"
    context = memory_context_get(agent=tenants.a.agent, user=tenants.a.user, session=tenants.a.session)
    assert context.token_count >= 1_000_000


def _formation_tasks_waiting(session_id: int) -> int:
    """Formation tasks for that session in the broker that no worker has taken (the formation queue is a Redis list of
    Celery messages; a message an earlier test's worker left unacknowledged may be restored to it at any time, so the
    whole list's length tells nothing of this test's)."""
    from memory_project.celery import app

    with app.connection_for_write() as connection:
        messages = connection.default_channel.client.lrange(settings.FORMATION_QUEUE, 0, -1)
    said = re.compile(rf"'session_id': {session_id}\b|^\({session_id},")
    headers = [json.loads(message).get("headers", {}) for message in messages]
    return sum(
        1 for header in headers if said.search(header.get("kwargsrepr", "")) or said.search(header.get("argsrepr", ""))
    )


def test_closing_a_closed_session_changes_nothing_and_queues_nothing(http, tenants):
    # Workers that run (the session-wide one, when an earlier test started it) must not take the first close's task,
    # so that what the broker holds tells what each close queued.
    with celery_workers_paused():
        first = http.post("/api/v1/sessions/alice-chat/close")
        assert first.status_code == 202
        closed_at = first.json()["closed_at"]
        session_id = tenants.a.session.pk
        queued_by_first = wait_until(
            lambda: _formation_tasks_waiting(session_id), timeout=10, what="the first close's formation task"
        )
        Session.objects.filter(pk=tenants.a.session.pk).update(formation_status=Session.FormationStatus.IDLE)

        again = http.post("/api/v1/sessions/alice-chat/close")

        assert again.status_code == 200
        assert again.json()["closed_at"] == closed_at
        session = Session.objects.get(pk=tenants.a.session.pk)
        assert session.formation_status == Session.FormationStatus.IDLE  # no formation queued again
        assert _formation_tasks_waiting(session_id) == queued_by_first


def test_two_credentials_that_disagree_are_refused(live_server, tenants):
    a, b = tenants.a.key, tenants.b.key
    refused = [
        {"Authorization": "Bearer mem_not-a-key", "X-API-Key": a},
        {"Authorization": f"Bearer {a}", "X-API-Key": "mem_not-a-key"},
        {"Authorization": f"Bearer {a}", "X-API-Key": b},
        {"Authorization": "Basic YWxhZGRpbjpvcGVuc2VzYW1l", "X-API-Key": a},
    ]
    for headers in refused:
        response = httpx.get(f"{live_server.url}/api/v1/facts", headers=headers)
        assert response.status_code == 401, (headers, response.text[:200])
        assert _error(response)["code"] == "authentication_failed"
    agreeing = httpx.get(f"{live_server.url}/api/v1/facts", headers={"Authorization": f"Bearer {a}", "X-API-Key": a})
    assert agreeing.status_code == 200


def test_the_same_idempotency_key_with_different_content_is_a_409_naming_the_key(http, tenants):
    path = "/api/v1/sessions/alice-chat/messages"
    first = http.post(path, json={"messages": [{"role": "user", "content": "Pay 10 EUR", "idempotency_key": "pay-1"}]})
    assert first.status_code == 201
    before = stored_rows_digest()

    retry = http.post(path, json={"messages": [{"role": "user", "content": "Pay 10 EUR", "idempotency_key": "pay-1"}]})
    changed = http.post(
        path, json={"messages": [{"role": "user", "content": "Pay 99 EUR", "idempotency_key": "pay-1"}]}
    )
    in_one_batch = http.post(
        path,
        json={
            "messages": [
                {"role": "user", "content": "new one", "idempotency_key": "pay-2"},
                {"role": "user", "content": "another", "idempotency_key": "pay-2"},
            ]
        },
    )

    assert retry.status_code == 200 and retry.json()["created_count"] == 0
    for response, field in ((changed, "messages.0.idempotency_key"), (in_one_batch, "messages.1.idempotency_key")):
        assert response.status_code == 409, response.text[:300]
        error = _error(response)
        assert error["code"] == "idempotency_conflict"
        assert field in error["fields"] and "pay-" in error["message"]
    assert stored_rows_digest() == before


def test_the_session_messages_list_refuses_a_bad_page_size_like_the_other_lists(http):
    for page_size in ("0", "501", "ten", "-1"):
        response = http.get("/api/v1/sessions/alice-chat/messages", params={"page_size": page_size})
        assert response.status_code == 400, (page_size, response.text[:200])
        assert "page_size" in _error(response)["fields"]
    assert len(http.get("/api/v1/sessions/alice-chat/messages", params={"page_size": "1"}).json()["results"]) == 1


PARSE_ERRORS = [
    (b'{"query": "x", "min_similarity": NaN}', "/api/v1/memory/search", "min_similarity"),
    (b'{"query": "x", "top_k": Infinity}', "/api/v1/memory/search", "top_k"),
    (b'{"query": "x", "min_similarity": 1e999}', "/api/v1/memory/search", "min_similarity"),
    (
        b'{"user": "alice", "messages": [{"role": "user", "content": "caf\xe9"}]}',
        "/api/v1/sessions/alice-chat/messages",
        "messages.0.content",
    ),
    (('{"query": "x", "tags": ' + "[" * 100_000 + "]" * 100_000 + "}").encode(), "/api/v1/memory/search", "tags"),
    (b'{"query": "x",', "/api/v1/memory/search", "body"),
]


@pytest.mark.parametrize(("body", "path", "field"), PARSE_ERRORS)
def test_parse_level_errors_name_what_failed(http, body, path, field):
    response = http.post(path, content=body, headers={"Content-Type": "application/json"})

    assert response.status_code == 400, response.text[:300]
    error = _error(response)
    assert error["code"] == "parse_error"
    assert any(name == field or name.startswith(field + ".") for name in error["fields"]), error
    assert field in error["message"]


def test_a_number_is_not_accepted_as_text(http):
    before = stored_rows_digest()
    cases = [
        ("/api/v1/sessions/alice-chat/messages", {"messages": [{"role": "user", "content": 5}]}, "messages.0.content"),
        (
            "/api/v1/sessions/alice-chat/messages",
            {"messages": [{"role": "user", "content": 1.5}]},
            "messages.0.content",
        ),
        ("/api/v1/facts", {"user": "alice", "content": 12345}, "content"),
        ("/api/v1/reflections", {"scope": "agent", "content": 7}, "content"),
        ("/api/v1/memory/search", {"query": 42}, "query"),
        ("/api/v1/sessions", {"user": 1, "session": "s"}, "user"),
    ]
    for path, body, field in cases:
        response = http.post(path, json=body)
        assert response.status_code == 400, (path, response.text[:300])
        assert field in _error(response)["fields"], (path, response.json())
    assert stored_rows_digest() == before


@pytest.mark.parametrize("debug", [False, True])
def test_unrouted_api_paths_answer_in_the_error_shape(http, settings, debug):
    settings.DEBUG = debug
    for path in ("/api/v1/nothing-here", "/api/v2/facts", "/api/", "/v1/models", "/api/v1/facts/abc"):
        response = http.get(path)
        assert response.status_code == 404, path
        assert _error(response)["code"] == "not_found", path
    # A known path missing only its trailing slash is still redirected to it.
    assert http.get("/api/v1/schema").status_code == 301


def test_reflections_can_be_read_and_deleted_through_the_api(http, tenants):
    own, others = tenants.a.reflection_ids[1], tenants.b.reflection_ids[1]
    block = memory_context_get(agent=tenants.a.agent, user=tenants.a.user, session=tenants.a.session)
    content = Reflection.objects.get(pk=own).content
    assert content in block.text

    assert http.get(f"/api/v1/reflections/{own}").json()["content"] == content
    assert http.delete(f"/api/v1/reflections/{others}").status_code == 404
    deleted = http.delete(f"/api/v1/reflections/{own}")

    assert deleted.status_code == 204
    assert not Reflection.objects.filter(pk=own).exists() and Reflection.objects.filter(pk=others).exists()
    assert http.get(f"/api/v1/reflections/{own}").status_code == 404
    assert http.delete(f"/api/v1/reflections/{own}").status_code == 404
    block = memory_context_get(agent=tenants.a.agent, user=tenants.a.user, session=tenants.a.session)
    assert content not in block.text  # the cached block was invalidated
