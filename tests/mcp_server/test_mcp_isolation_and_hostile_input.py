"""What one tenant can reach through MCP, and what hostile tool arguments do: key A never sees or changes agent B's
memory through any tool or the resource; wrong types, huge strings, deep JSON, unknown arguments and unknown tools
come back as MCP tool errors naming the argument, and store nothing."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest

from agents.models import AgentMemoryFromUsers, EndUser
from facts.models import EntityType, Fact
from facts.services.graph import EntityMention
from formation.models import HeldMemory
from mcp_server.tools import Caller, memory_tool_call
from tests.graph_support import relation_stated
from tests.mcp_server.conftest import (
    conversation_store,
    mcp_http,
    reflection_store,
    tenant_create,
    tool_error,
    tool_json,
)

pytestmark = pytest.mark.django_db(transaction=True)

B_SECRET_WORDS = ("Zanzibar", "quokka", "B-only")


def test_key_a_never_reaches_agent_bs_memory_through_any_tool(service_url):
    a = tenant_create("agent-a")
    b = tenant_create("agent-b", agent_memory_from_users=AgentMemoryFromUsers.OPEN)
    conversation_store(agent=b.agent, user="gene", session="s1", turns=[("user", "My quokka lives in Zanzibar.")])
    reflection_store(agent=b.agent, user="gene", content="B-only: Gene keeps a quokka.")

    async def as_b():
        async with mcp_http(service_url, headers={"Authorization": f"Bearer {b.key}"}) as client:
            user_fact = tool_json(
                await client.call_tool("save_memory", {"content": "Gene's quokka is from Zanzibar.", "user": "gene"})
            )
            agent_fact = tool_json(
                await client.call_tool(
                    "save_memory", {"content": "B-only: the Zanzibar office opens at 8.", "scope": "agent"}
                )
            )
            return [user_fact["memory"]["id"], agent_fact["memory"]["id"]]

    b_fact_ids = anyio.run(as_b)
    user_fact, agent_fact = (Fact.objects.get(pk=pk) for pk in b_fact_ids)
    quokka, office = EntityMention("Quokka", EntityType.THING), EntityMention("Zanzibar office", EntityType.PLACE)
    relation_stated(fact=user_fact, subject=quokka, predicate="lives_in", value="Zanzibar")
    relation_stated(fact=agent_fact, subject=office, predicate="opens_at", value="8")

    async def as_a():
        seen = []
        async with mcp_http(service_url, headers={"X-API-Key": a.key}) as client:
            for name, arguments in [
                ("search_memory", {"query": "Zanzibar quokka", "user": "gene"}),
                ("search_memory", {"query": "Zanzibar office"}),
                ("search_conversations", {"query": "Where does the quokka live?", "user": "gene"}),
                ("search_conversations", {"query": "quokka", "session": "s1"}),
                ("get_memory_context", {"user": "gene"}),
                ("get_entity", {"name": "quokka", "user": "gene", "include_ended": True}),
                ("get_entity", {"name": "Zanzibar office"}),
                ("get_timeline", {"user": "gene"}),
                ("get_timeline", {"entity": "quokka", "user": "gene"}),
                ("get_timeline", {"entity": "Zanzibar office"}),
                ("get_memory_bundle", {"query": "Zanzibar quokka", "user": "gene", "session": "s1"}),
            ]:
                seen.append(json.dumps(tool_json(await client.call_tool(name, arguments))))
            refused = []
            for fact_id in b_fact_ids:
                for name, arguments in [
                    ("update_memory", {"id": fact_id, "content": "Hijacked.", "user": "gene"}),
                    ("delete_memory", {"id": fact_id, "user": "gene"}),
                    ("delete_memory", {"id": fact_id}),
                ]:
                    refused.append(tool_error(await client.call_tool(name, arguments)))
            resource = await client.read_resource("memory://users/gene/context")
            seen.append(resource.contents[0].text)
        return seen, refused

    seen, refused = anyio.run(as_a)

    for text in seen:
        assert not any(word in text for word in B_SECRET_WORDS), text
    assert all("there is no memory with id" in error for error in refused), refused
    assert sorted(Fact.objects.filter(agent=b.agent, valid_to__isnull=True).values_list("pk", flat=True)) == sorted(
        b_fact_ids
    )
    assert not Fact.objects.filter(agent=a.agent).exists()


HOSTILE_CALLS = [
    # (tool, arguments, the argument the error must name)
    ("search_memory", {"query": 5}, "query"),
    ("search_memory", {"query": "birthday", "top_k": "5"}, "top_k"),
    ("search_memory", {"query": "birthday", "top_k": 10_000}, "top_k"),
    ("search_memory", {"query": "q" * 100_000}, "query"),
    ("search_memory", {"query": "birthday", "user": 7}, "user"),
    ("save_memory", {"content": ["Gene likes tea."]}, "content"),
    ("save_memory", {"content": "x" * 1_000_000}, "content"),
    ("save_memory", {"content": "Gene likes tea.\u0000"}, "content"),
    ("save_memory", {"content": "Gene likes tea.", "scope": "everyone"}, "scope"),
    ("save_memory", {"content": "Gene likes tea.", "tags": "tea"}, "tags"),
    ("save_memory", {"content": "Gene likes tea.", "colour": "red"}, "colour"),
    ("save_memory", {"content": "Gene likes tea.", "user": "u" * 300}, "user"),
    ("save_memory", {}, "content"),
    ("update_memory", {"id": "1", "content": "Gene likes coffee."}, "id"),
    ("delete_memory", {"id": 1.5}, "id"),
    ("search_conversations", {"query": {"$ne": None}, "user": "gene"}, "query"),
    ("get_memory_bundle", {"query": "tea", "token_budget": -1}, "token_budget"),
    ("get_memory_context", {"verbose": True}, "verbose"),
    ("get_entity", {"name": ["Maria"]}, "name"),
    ("get_entity", {"name": "m" * 10_000}, "name"),
    ("get_entity", {"name": "Maria", "include_ended": "yes"}, "include_ended"),
    ("search_memory", {"query": "birthday", "holds_at": "last summer"}, "holds_at"),
    ("search_memory", {"query": "birthday", "holds_at": "2023-02-30"}, "holds_at"),
    ("get_timeline", {"user": "gene", "time_from": "2023-13-01"}, "time_from"),
    ("get_timeline", {"user": "gene", "time_from": "2024-01-01", "time_to": "2023-01-01"}, "time_to"),
    ("get_timeline", {"user": "gene", "limit": 500}, "limit"),
    ("get_timeline", {"user": "gene", "cursor": "not-a-cursor"}, "cursor"),
    ("get_timeline", {"entity": ["Maria"]}, "entity"),
    ("no_such_tool", {"query": "tea"}, "no_such_tool"),
]


def _nested(depth: int) -> object:
    value: object = "deep"
    for _ in range(depth):
        value = [value]
    return value


def test_hostile_arguments_are_tool_errors_naming_the_argument_and_store_nothing(service_url):
    tenant = tenant_create("agent-a")
    calls = [*HOSTILE_CALLS, ("save_memory", {"content": "Gene likes tea.", "tags": _nested(60)}, "tags")]

    async def main():
        errors = []
        async with mcp_http(service_url, headers={"Authorization": f"Bearer {tenant.key}"}) as client:
            for name, arguments, _ in calls:
                errors.append(tool_error(await client.call_tool(name, arguments)))
            # The connection is still good after all of them.
            still = tool_json(await client.call_tool("search_memory", {"query": "tea", "user": "gene"}))
        return errors, still

    errors, still = anyio.run(main)

    for (name, _, argument), error in zip(calls, errors, strict=True):
        assert argument in error, f"{name}: {error!r} does not name {argument!r}"
    assert still == {"memories": []}
    assert not Fact.objects.exists() and not HeldMemory.objects.exists() and not EndUser.objects.exists()


def test_json_nested_past_what_the_protocol_parser_reads_is_refused_not_a_500(service_url):
    tenant = tenant_create("agent-a")
    depth = 5000
    arguments = '{"content": "Gene likes tea.", "tags": ' + "[" * depth + "]" * depth + "}"
    body = (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "save_memory", "arguments": '
        + arguments
        + "}}"
    )
    headers = {
        "Authorization": f"Bearer {tenant.key}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
    }

    response = httpx.post(f"{service_url}/mcp", content=body, headers=headers)

    assert response.status_code < 500
    reply = response.json()
    assert "error" in reply or reply["result"]["isError"] is True, reply
    assert not Fact.objects.exists() and not EndUser.objects.exists()


def test_a_pinning_header_that_is_not_an_id_is_refused_naming_it(service_url):
    tenant = tenant_create("agent-a")
    headers = {"Authorization": f"Bearer {tenant.key}", "X-Memory-User": "u" * 201}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}

    over_mcp = httpx.post(
        f"{service_url}/mcp",
        json=call,
        headers=headers | {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"},
    )
    over_rest = httpx.get(f"{service_url}/api/v1/mcp/tools", headers=headers)

    for response in (over_mcp, over_rest):
        assert response.status_code == 400
        assert list(response.json()["error"]["fields"]) == ["X-Memory-User"]


def _exchange(service_url, *, headers=None, body=None):
    tenant = tenant_create("agent-a")
    sent = {
        "Authorization": f"Bearer {tenant.key}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
    } | (headers or {})
    call = body if body is not None else '{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}'
    return httpx.post(f"{service_url}/mcp", content=call, headers={k: v for k, v in sent.items() if v is not None})


@pytest.mark.parametrize(
    ("headers", "status", "code", "field"),
    [
        ({"Content-Type": "text/plain"}, 415, "unsupported_media_type", "Content-Type"),
        ({"Content-Type": None}, 415, "unsupported_media_type", "Content-Type"),
        ({"Accept": "text/html"}, 406, "not_acceptable", "Accept"),
        ({"MCP-Protocol-Version": "1999-01-01"}, 400, "unsupported_protocol_version", "MCP-Protocol-Version"),
    ],
)
def test_a_refused_exchange_comes_back_in_the_api_error_shape_naming_what_was_wrong(
    service_url, headers, status, code, field
):
    response = _exchange(service_url, headers=headers)

    assert response.status_code == status
    error = response.json()["error"]
    assert error["code"] == code and list(error["fields"]) == [field] and error["message"]
    if code == "unsupported_protocol_version":
        assert "1999-01-01" in error["message"] and "2025-11-25" in error["message"]


def test_an_error_about_the_json_rpc_message_itself_stays_a_json_rpc_error(service_url):
    response = _exchange(service_url, body="{not json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700  # what MCP clients read and hand to their caller


DURATION_REFUSED = "Not a duration: give ISO 8601 (P7D, PT12H) or days and a time (7 days, 3 days 04:00:00)."
DATE_REFUSED = "Date has wrong format. Use one of these formats instead: YYYY-MM-DD."


@pytest.mark.parametrize(
    ("name", "arguments", "fields"),
    [
        ("search_memory", {"query": "tea", "top_k": "ten"}, {"top_k": ["A valid integer is required."]}),
        ("get_entity", {"name": "x" * 201}, {"name": ["Ensure this field has no more than 200 characters."]}),
        (
            "save_memory",
            {"content": "Gene likes tea.", "tags": ["tea", "x" * 101]},
            {"tags.1": ["Ensure this field has no more than 100 characters."]},
        ),
        ("update_memory", {"id": 1}, {"content": ["This field is required."]}),
        ("delete_memory", {"id": 1, "colour": "red"}, {"colour": ["unknown argument"]}),
        ("save_memory", {"content": "Gene's door code is 4471."}, {"content": ["holds a secret (password or PIN)"]}),
        ("save_memory", {"content": "Gene is in room 12.", "expires_in": "soon"}, {"expires_in": [DURATION_REFUSED]}),
        ("rate_memory", {"id": 1, "rating": "meh"}, {"rating": ['"meh" is not a valid choice.']}),
        ("search_memory", {"query": "tea", "holds_at": "last year"}, {"holds_at": [DATE_REFUSED]}),
        (
            "get_timeline",
            {"time_from": "2024-05-01", "time_to": "2023-01-01"},
            {"time_to": ["is before time_from."]},
        ),
        ("get_timeline", {"limit": 51}, {"limit": ["Ensure this value is less than or equal to 50."]}),
    ],
)
def test_a_tool_error_carries_its_fields_in_structured_content(service_url, name, arguments, fields):
    tenant = tenant_create("agent-a")

    async def main():
        headers = {"Authorization": f"Bearer {tenant.key}", "X-Memory-User": "gene"}
        async with mcp_http(service_url, headers=headers) as client:
            return await client.call_tool(name, arguments)

    result = anyio.run(main)

    assert result.is_error and result.structured_content["error"]["fields"] == fields
    if result.content[0].text.startswith("invalid arguments"):  # its text names the path and the reason too
        path, [reason] = next(iter(fields.items()))
        assert f"{path}: {reason}" in result.content[0].text
    assert not Fact.objects.exists()


def test_get_timeline_is_refused_while_the_agents_rag_is_off():
    tenant = tenant_create("agent-a", rag_enabled=False)

    outcome = memory_tool_call(caller=Caller(agent=tenant.agent, user="gene"), name="get_timeline", arguments={})

    assert outcome.ok is False and "switched off" in (outcome.error or "")
    assert outcome.fields == {"name": ["switched off for this assistant"]}
