"""Hostile input: oversized, unstorable, malformed, mistyped and injection-shaped requests get a 4xx in the one
error format that names the field, never a 500, and leave every stored row as it was.

Unknown fields are ignored (docs/api.md explains why), consistently: a request with one behaves as without it."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from django.test import Client

from tests.hardening.conftest import Tenants, stored_rows_digest


@dataclass(frozen=True)
class Case:
    name: str
    method: str
    path: str
    body: bytes | None
    status: int
    field: str | None = None  # the field the error must name
    code: str | None = None


def _json(value) -> bytes:
    return json.dumps(value).encode()


def _messages(*messages: dict, user: str = "alice") -> bytes:
    return _json({"user": user, "messages": list(messages)})


def _nested(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


MESSAGES = "/api/v1/sessions/alice-chat/messages"
SEARCH = "/api/v1/memory/search"
TOOLS = "/api/v1/tools/call"
CHAT = "/v1/chat/completions"
# The body is level 0, so the value at level 32 sits under 29 levels of "a" below metadata (level 3).
TOO_DEEP_FIELD = "messages.0.metadata" + ".a" * 29

CASES = [
    # Size limits.
    Case(
        "content too long",
        "POST",
        MESSAGES,
        _messages({"role": "user", "content": "x" * 100_001}),
        400,
        "messages.0.content",
    ),
    Case("batch too large", "POST", MESSAGES, _messages(*[{"role": "user", "content": "hi"}] * 501), 400, "messages"),
    Case("search query too long", "POST", SEARCH, _json({"query": "q" * 2001}), 400, "query"),
    Case("bundle query too long", "POST", "/api/v1/memory/bundle", _json({"query": "q" * 20_001}), 400, "query"),
    Case("user id too long", "POST", "/api/v1/sessions", _json({"user": "u" * 201, "session": "s"}), 400, "user"),
    # NUL characters: PostgreSQL text and jsonb cannot store them.
    Case(
        "NUL in content", "POST", MESSAGES, _messages({"role": "user", "content": "a\x00b"}), 400, "messages.0.content"
    ),
    Case(
        "NUL in metadata",
        "POST",
        MESSAGES,
        _messages({"role": "user", "content": "hi", "metadata": {"n": "\x00"}}),
        400,
        "messages.0.metadata.n",
    ),
    Case(
        "NUL in a metadata key",
        "POST",
        MESSAGES,
        _messages({"role": "user", "content": "hi", "metadata": {"k\x00": 1}}),
        400,
        "messages.0.metadata.k\\x00",
    ),
    Case("NUL in user", "POST", MESSAGES, _messages({"role": "user", "content": "hi"}, user="al\x00ice"), 400, "user"),
    Case("NUL in the session path", "GET", "/api/v1/sessions/alice%00chat", None, 400, "session"),
    Case(
        "NUL in the session path of a write",
        "POST",
        "/api/v1/sessions/alice%00chat/messages",
        _messages({"role": "user", "content": "hi"}),
        400,
        "session",
    ),
    Case("NUL in a query parameter", "GET", "/api/v1/memory/context?user=al%00ice", None, 400, "user"),
    Case("NUL in a list filter", "GET", "/api/v1/facts?tag=a%00b", None, 400, "tag"),
    Case("a query parameter given twice", "GET", "/api/v1/memory/context?user=alice&user=bob", None, 400, "user"),
    Case("NUL in a search query", "POST", SEARCH, _json({"query": "locker\x00code"}), 400, "query"),
    Case(
        "NUL in tool arguments",
        "POST",
        TOOLS,
        _json({"name": "save_memory", "arguments": {"content": "a\x00"}}),
        400,
        "arguments.content",
    ),
    Case(
        "NUL in a chat message",
        "POST",
        CHAT,
        _json({"messages": [{"role": "user", "content": "hi\x00"}]}),
        400,
        "messages.0.content",
    ),
    # Lone surrogates: valid JSON escapes, not encodable as UTF-8.
    Case(
        "lone surrogate in content",
        "POST",
        MESSAGES,
        b'{"user": "alice", "messages": [{"role": "user", "content": "bad \\ud800 text"}]}',
        400,
        "messages.0.content",
    ),
    Case(
        "lone surrogate in a key",
        "POST",
        MESSAGES,
        b'{"user": "alice", "messages": [{"role": "user", "content": "hi", "metadata": {"\\udfff": 1}}]}',
        400,
        "messages.0.metadata.\\udfff",
    ),
    Case("lone surrogate in a search query", "POST", SEARCH, b'{"query": "\\udc80"}', 400, "query"),
    # Malformed bodies.
    Case(
        "invalid UTF-8",
        "POST",
        MESSAGES,
        b'{"user": "alice", "messages": [{"role": "user", "content": "\xff\xfe"}]}',
        400,
        "messages.0.content",
        code="parse_error",
    ),
    Case("not JSON", "POST", MESSAGES, b"{user: alice", 400, "body", code="parse_error"),
    Case("NaN", "POST", SEARCH, b'{"query": "x", "min_similarity": NaN}', 400, "min_similarity", code="parse_error"),
    Case("Infinity", "POST", SEARCH, b'{"query": "x", "top_k": -Infinity}', 400, "top_k", code="parse_error"),
    Case(
        "an integer of 5,000 digits",
        "POST",
        SEARCH,
        b'{"query": "x", "top_k": ' + b"9" * 5000 + b"}",
        400,
        "top_k",
        code="parse_error",
    ),
    Case(
        "deeply nested JSON",
        "POST",
        MESSAGES,
        ('{"user": "alice", "metadata": ' + _nested(200_000) + "}").encode(),
        400,
        "metadata" + ".a" * 31,
        code="parse_error",
    ),
    Case(
        "nested deeper than the limit",
        "POST",
        MESSAGES,
        _messages({"role": "user", "content": "hi", "metadata": json.loads(_nested(40))}),
        400,
        TOO_DEEP_FIELD,
    ),
    Case("a list instead of an object", "POST", MESSAGES, b"[1, 2]", 400, "non_field_errors"),
    Case("empty body", "POST", MESSAGES, b"", 400, "messages"),
    # Wrong types.
    Case("messages is a string", "POST", MESSAGES, _json({"user": "alice", "messages": "hi"}), 400, "messages"),
    Case(
        "content is an object",
        "POST",
        MESSAGES,
        _messages({"role": "user", "content": {"a": 1}}),
        400,
        "messages.0.content",
    ),
    Case("role is a number", "POST", MESSAGES, _messages({"role": 5, "content": "hi"}), 400, "messages.0.role"),
    Case(
        "metadata is a list",
        "POST",
        MESSAGES,
        _messages({"role": "user", "content": "hi", "metadata": [1]}),
        400,
        "messages.0.metadata",
    ),
    Case(
        "created_at is not a date",
        "POST",
        MESSAGES,
        _messages({"role": "user", "content": "hi", "created_at": "yesterday"}),
        400,
        "messages.0.created_at",
    ),
    Case("top_k is a word", "POST", SEARCH, _json({"query": "x", "top_k": "ten"}), 400, "top_k"),
    Case("top_k is a boolean", "POST", SEARCH, _json({"query": "x", "top_k": True}), 400, "top_k"),
    Case("top_k is a numeric string", "POST", SEARCH, _json({"query": "x", "top_k": "10"}), 400, "top_k"),
    Case(
        "a weight is a boolean", "POST", SEARCH, _json({"query": "x", "recency_weight": False}), 400, "recency_weight"
    ),
    Case(
        "scopes is a string",
        "POST",
        "/api/v1/facts",
        _json({"content": "Alice owns a bike", "scopes": "user"}),
        400,
        "scopes",
    ),
    Case(
        "tool arguments are a number", "POST", TOOLS, _json({"name": "search_memory", "arguments": 5}), 400, "arguments"
    ),
    Case("chat messages are strings", "POST", CHAT, _json({"messages": ["hi"]}), 400, "messages.0"),
    # Huge numbers.
    Case("huge top_k", "POST", SEARCH, _json({"query": "x", "top_k": 10**40}), 400, "top_k"),
    Case(
        "infinite token budget",
        "POST",
        "/api/v1/memory/bundle",
        b'{"query": "x", "token_budget": 1e999}',
        400,
        "token_budget",
    ),
    Case("infinite similarity", "POST", SEARCH, b'{"query": "x", "min_similarity": -1e999}', 400, "min_similarity"),
    Case("huge page size", "GET", f"/api/v1/facts?page_size={10**30}", None, 400, "page_size"),
    Case("a page size in superscript digits", "GET", "/api/v1/facts?page_size=%C2%B2", None, 400, "page_size"),
    Case("huge fact id", "GET", f"/api/v1/facts/{10**30}", None, 404, code="not_found"),
    Case(
        "huge fact id in a tool call", "POST", TOOLS, _json({"name": "delete_memory", "arguments": {"id": 10**30}}), 200
    ),
    Case("huge blob id", "PATCH", f"/api/v1/blobs/{2**63}", _json({"content": "x"}), 404, code="not_found"),
    Case("garbage cursor", "GET", "/api/v1/facts?cursor=%00%ff%27", None, 400, "cursor"),
    # World time: a moment or a bound that is not a date, out of range, or an end before its start.
    Case("holds_at is not a date", "POST", SEARCH, _json({"query": "x", "holds_at": "last year"}), 400, "holds_at"),
    Case("holds_at has no such day", "POST", SEARCH, _json({"query": "x", "holds_at": "2023-02-30"}), 400, "holds_at"),
    Case("holds_at out of range", "POST", SEARCH, _json({"query": "x", "holds_at": "0000-01-01"}), 400, "holds_at"),
    Case("holds_at is a number", "POST", SEARCH, _json({"query": "x", "holds_at": 20230501}), 400, "holds_at"),
    Case(
        "holds_at has no such hour",
        "POST",
        SEARCH,
        _json({"query": "x", "holds_at": "2023-05-01T25:00"}),
        400,
        "holds_at",
    ),
    Case(
        "holds_at in a tool call",
        "POST",
        TOOLS,
        _json({"name": "search_memory", "arguments": {"query": "x", "holds_at": "soon"}}),
        200,
    ),
    Case(
        "a world time ending before it starts",
        "POST",
        "/api/v1/facts",
        _json({"content": "Alice lived in Oslo", "world_time": {"start": "2020-05", "end": "2019"}}),
        400,
        "world_time.end",
    ),
    Case(
        "a world time start that is no day",
        "POST",
        "/api/v1/facts",
        _json({"content": "Alice lived in Oslo", "world_time": {"start": "2021-02-29"}}),
        400,
        "world_time.start",
    ),
    Case(
        "a world time year out of range",
        "POST",
        "/api/v1/facts",
        _json({"content": "Alice lived in Oslo", "world_time": {"start": "10000-01-01"}}),
        400,
        "world_time.start",
    ),
    Case(
        "a world time precision not in the list",
        "POST",
        "/api/v1/facts",
        _json({"content": "Alice lived in Oslo", "world_time": {"start": "2020", "start_precision": "decade"}}),
        400,
        "world_time.start_precision",
    ),
    Case(
        "a world time precision without its date",
        "POST",
        "/api/v1/facts",
        _json({"content": "Alice lived in Oslo", "world_time": {"end_precision": "day"}}),
        400,
        "world_time.end",
    ),
    Case(
        "a world time that is a string",
        "POST",
        "/api/v1/facts",
        _json({"content": "Alice lived in Oslo", "world_time": "2020"}),
        400,
        "world_time",
    ),
    Case(
        "a timeline window ending before it starts",
        "GET",
        "/api/v1/users/alice/timeline?time_from=2024-01-01&time_to=2023-01-01",
        None,
        400,
        "time_to",
    ),
    Case(
        "a timeline day that is no day",
        "GET",
        "/api/v1/users/alice/timeline?time_from=2023-02-30",
        None,
        400,
        "time_from",
    ),
    Case("garbage timeline cursor", "GET", "/api/v1/users/alice/timeline?cursor=%00%ff%27", None, 400, "cursor"),
    Case("huge timeline page", "GET", f"/api/v1/users/alice/timeline?page_size={10**30}", None, 400, "page_size"),
    Case(
        "a profile category no agent files under",
        "GET",
        "/api/v1/users/alice/profile?category=%00",
        None,
        400,
        "category",
    ),
    Case(
        "an agent-wide profile of an unknown category",
        "GET",
        "/api/v1/profile?category=astrology",
        None,
        400,
        "category",
    ),
]


@pytest.fixture
def caller(tenants: Tenants) -> Client:
    return tenants.a.client()


def _send(client: Client, case: Case):
    if case.body is None:
        return client.generic(case.method, case.path)
    return client.generic(case.method, case.path, case.body, content_type="application/json")


def test_hostile_requests_get_a_4xx_naming_the_field_and_change_nothing(caller, settings):
    settings.LLM_PROVIDER = "offline"  # a valid chat request would be a 503; every one here must fail validation
    problems = []
    for case in CASES:
        before = stored_rows_digest()
        response = _send(caller, case)
        body = response.json()
        problem = None
        if response.status_code != case.status:
            problem = f"status {response.status_code}"
        elif (
            case.status >= 400
            and set(body) != {"error"}
            or case.status >= 400
            and set(body["error"])
            != {
                "code",
                "message",
                "fields",
            }
        ):
            problem = "not in the one error format"
        elif case.field and case.field not in body["error"]["fields"]:
            problem = f"fields {list(body['error']['fields'])} do not name {case.field}"
        elif case.field and case.field != "non_field_errors" and case.field not in body["error"]["message"]:
            problem = f"the message does not name {case.field}"
        elif case.code and body["error"]["code"] != case.code:
            problem = f"code {body['error']['code']}"
        elif stored_rows_digest() != before:
            problem = "stored rows changed"
        if problem:
            problems.append(f"{case.name}: {problem}: {json.dumps(body)[:300]}")

    assert not problems, "\n".join(problems)


def test_a_body_over_the_size_limit_is_413_in_the_one_error_format_before_it_is_read(caller, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 50_000
    before = stored_rows_digest()

    response = caller.post(MESSAGES, _messages({"role": "user", "content": "y" * 60_000}), "application/json")

    assert response.status_code == 413
    assert response.json() == {
        "error": {
            "code": "request_too_large",
            "message": "The request body is larger than 50000 bytes.",
            "fields": {},
        }
    }
    assert stored_rows_digest() == before
    # Just under the limit is accepted.
    assert (
        caller.post(MESSAGES, _messages({"role": "user", "content": "y" * 40_000}), "application/json").status_code
        == 201
    )


SEARCH_METACHARACTERS = [
    "'; DROP TABLE facts_fact; --",
    '" OR 1=1 --',
    "locker' OR '1'='1",
    "!!! & | :* ( ) <-> \\",
    "a:*B & !c | (d <-> e)",
    "(((",
    '"',
    "-",
    "or",
    "*",
    "%_%",
    "\\x27",
    "$$; SELECT pg_sleep(10); $$",
    "locker -code",
    '"locker code" or wifi',
]


@pytest.mark.parametrize("mode", ["hybrid", "text"])
def test_sql_and_full_text_metacharacters_in_search_are_just_text(caller, tenants, mode):
    before = stored_rows_digest()
    for query in SEARCH_METACHARACTERS:
        response = caller.post(SEARCH, {"query": query, "mode": mode}, "application/json")
        assert response.status_code == 200, (query, response.json())
        assert isinstance(response.json()["results"], list)
        response = caller.get("/api/v1/facts", {"tag": query, "user": query})
        assert response.status_code == 200 and response.json()["results"] == [], query

    assert stored_rows_digest() == before
    found = caller.post(SEARCH, {"query": '"locker code" or wifi', "mode": mode, "user": "alice"}, "application/json")
    assert {hit["fact"]["id"] for hit in found.json()["results"]} == set(tenants.a.fact_ids)


def test_unknown_fields_are_ignored_consistently(caller, tenants):
    plain = caller.post("/api/v1/sessions", {"user": "dora", "session": "dora-1"}, "application/json")
    extra = caller.post(
        "/api/v1/sessions", {"user": "dora", "session": "dora-2", "agent": "agent-b", "owner": "x"}, "application/json"
    )
    assert (plain.status_code, extra.status_code) == (201, 201)
    assert set(plain.json()) == set(extra.json())

    search = caller.post(SEARCH, {"query": "locker code", "user": "alice", "top_k": 5}, "application/json")
    with_extra = caller.post(
        SEARCH,
        {"query": "locker code", "user": "alice", "top_k": 5, "agent_id": tenants.b.agent.pk},
        "application/json",
    )
    assert with_extra.status_code == 200 and with_extra.json() == search.json()


@pytest.mark.parametrize(
    ("world_time", "field"),
    [
        ({"start": "2022", "end": "2021-06"}, "world_time.end"),
        ({"start": "2022-00"}, "world_time.start"),
        ({"end": "2023", "end_precision": "decade"}, "world_time.end_precision"),
        ({"start_precision": "day"}, "world_time.start"),
    ],
)
def test_a_world_time_that_cannot_be_changes_no_fact(caller, tenants, world_time, field):
    before = stored_rows_digest()

    response = caller.patch(
        f"/api/v1/facts/{tenants.a.fact_ids[0]}", {"world_time": world_time}, content_type="application/json"
    )

    assert response.status_code == 400, response.json()
    assert field in response.json()["error"]["fields"]
    assert stored_rows_digest() == before
