"""The MCP server over Streamable HTTP at /mcp, driven by the mcp SDK's own client against the live stack (the
service's WSGI application as gunicorn serves it, real PostgreSQL and Redis): every tool, the resource, the
annotations, the review queue and the sensitive-data rules, authentication and throttling."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date

import anyio
import httpx
import pytest
from mcp.shared.exceptions import MCPError

from agents.models import AgentMemoryFromUsers, EndUser
from conversations.models import Message
from core.safety.sensitive import SensitiveDataPolicy
from facts.models import Fact
from facts.services.facts import fact_create, fact_world_end
from facts.world_time import WorldTime
from formation.models import HeldMemory
from tests.category_support import fact_filed
from tests.conftest import REPO_DIR, database_url_of_test_database
from tests.factories import EndUserFactory
from tests.graph_support import sister_graph_create
from tests.mcp_server.conftest import (
    conversation_store,
    mcp_http,
    reflection_store,
    tenant_create,
    tool_error,
    tool_json,
)
from tests.memory_client_support import MemoryClient

pytestmark = pytest.mark.django_db(transaction=True)

ALL_TOOLS = {
    "search_memory",
    "get_entity",
    "get_profile",
    "save_memory",
    "update_memory",
    "delete_memory",
    "rate_memory",
    "search_conversations",
    "get_memory_context",
    "get_memory_bundle",
    "get_timeline",
}
WIFI = "the wifi password at my place is hunter2-blue"


def _bearer(tenant, **pinned) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {tenant.key}"}
    if "user" in pinned:
        headers["X-Memory-User"] = pinned["user"]
    return headers


def test_tools_are_listed_with_schemas_descriptions_and_annotations(service_url, tenant):
    async def main():
        async with mcp_http(service_url, headers=_bearer(tenant)) as client:
            return (await client.list_tools()).tools, client.protocol_version

    tools, protocol_version = anyio.run(main)

    assert protocol_version >= "2025-06-18"
    by_name = {tool.name: tool for tool in tools}
    assert set(by_name) == ALL_TOOLS
    for tool in tools:
        assert len(tool.description) > 60, tool.name
        assert tool.input_schema["type"] == "object" and tool.input_schema["additionalProperties"] is False
        assert {"user", "session"} <= set(tool.input_schema["properties"]), tool.name
    read_only = {name for name, tool in by_name.items() if tool.annotations.read_only_hint}
    assert read_only == {
        "search_memory",
        "get_entity",
        "get_profile",
        "search_conversations",
        "get_memory_context",
        "get_memory_bundle",
        "get_timeline",
    }
    destructive = {name for name, tool in by_name.items() if tool.annotations.destructive_hint}
    assert destructive == {"update_memory", "delete_memory", "rate_memory"}
    assert by_name["delete_memory"].annotations.idempotent_hint is True
    assert by_name["update_memory"].annotations.idempotent_hint is False
    assert by_name["save_memory"].input_schema["required"] == ["content"]
    assert by_name["search_memory"].input_schema["properties"]["top_k"]["maximum"] == 20


def test_a_client_of_the_2025_handshake_revisions_is_served_too(service_url, tenant):
    async def main():
        async with mcp_http(service_url, headers=_bearer(tenant, user="gene"), mode="legacy") as client:
            saved = tool_json(await client.call_tool("save_memory", {"content": "Gene plays the cello."}))
            found = tool_json(await client.call_tool("search_memory", {"query": "What does Gene play?"}))
            return client.protocol_version, saved, found

    protocol_version, saved, found = anyio.run(main)

    assert protocol_version == "2025-11-25"
    assert saved["saved"] is True and found["memories"][0]["content"] == "Gene plays the cello."


def test_a_connection_pinned_to_a_user_offers_no_user_argument(service_url, tenant):
    async def main():
        async with mcp_http(service_url, headers=_bearer(tenant, user="gene")) as client:
            return (await client.list_tools()).tools

    for tool in anyio.run(main):
        assert "user" not in tool.input_schema["properties"], tool.name


def test_every_tool_and_the_resource_over_http(service_url, tenant):
    conversation_store(
        agent=tenant.agent,
        user="gene",
        session="s1",
        turns=[("user", "We finally went kayaking on Lake Annecy last weekend."), ("assistant", "Sounds lovely!")],
    )
    reflection_store(agent=tenant.agent, user="gene", content="Gene prefers short answers.")

    async def main():
        async with mcp_http(service_url, headers=_bearer(tenant, user="gene")) as client:
            saved = tool_json(await client.call_tool("save_memory", {"content": "Gene's birthday is March 15th."}))
            fact_id = saved["memory"]["id"]
            found = tool_json(await client.call_tool("search_memory", {"query": "When is Gene's birthday?"}))
            updated = tool_json(
                await client.call_tool("update_memory", {"id": fact_id, "content": "Gene's birthday is March 16th."})
            )
            turns = tool_json(await client.call_tool("search_conversations", {"query": "Where did we go kayaking?"}))
            context = tool_json(await client.call_tool("get_memory_context", {}))
            bundle = tool_json(await client.call_tool("get_memory_bundle", {"query": "plan Gene's birthday"}))
            deleted = tool_json(await client.call_tool("delete_memory", {"id": updated["memory"]["id"]}))
            after = tool_json(await client.call_tool("search_memory", {"query": "birthday"}))
            resources = (await client.list_resources()).resources
            templates = (await client.list_resource_templates()).resource_templates
            pinned = await client.read_resource("memory://context")
            by_template = await client.read_resource("memory://users/gene/context")
            return (
                saved,
                found,
                updated,
                turns,
                context,
                bundle,
                deleted,
                after,
                resources,
                templates,
                pinned,
                by_template,
            )

    saved, found, updated, turns, context, bundle, deleted, after, resources, templates, pinned, by_template = (
        anyio.run(main)
    )

    assert saved["saved"] is True and saved["memory"]["scope"] == ["user"]
    assert found["memories"][0]["content"] == "Gene's birthday is March 15th."
    assert updated["updated"] is True and updated["memory"]["content"] == "Gene's birthday is March 16th."
    assert "Lake Annecy" in turns["messages"][0]["content"] and turns["messages"][0]["session"] == "s1"
    assert "Gene prefers short answers." in context["text"]
    assert "March 16th" in bundle["text"] and bundle["tokens_used"] <= bundle["token_budget"]
    assert deleted == {"deleted": True, "id": updated["memory"]["id"]}
    assert after["memories"] == []
    assert [resource.uri for resource in resources] == ["memory://context", "memory://profile"]
    assert [template.uri_template for template in templates] == [
        "memory://users/{user}/context",
        "memory://users/{user}/profile",
    ]
    assert "Gene prefers short answers." in pinned.contents[0].text
    assert by_template.contents[0].text == pinned.contents[0].text
    fact = Fact.objects.get(pk=saved["memory"]["id"])
    assert fact.agent == tenant.agent and fact.user.external_id == "gene"


def test_an_unpinned_connection_names_the_user_in_each_call(service_url, tenant):
    async def main():
        async with mcp_http(service_url, headers=_bearer(tenant)) as client:
            await client.call_tool("save_memory", {"content": "Ana works at Nordlicht GmbH.", "user": "ana"})
            for_ana = tool_json(
                await client.call_tool("search_memory", {"query": "Where does Ana work?", "user": "ana"})
            )
            for_bob = tool_json(
                await client.call_tool("search_memory", {"query": "Where does Ana work?", "user": "bob"})
            )
            no_user = tool_error(await client.call_tool("search_conversations", {"query": "anything"}))
            return for_ana, for_bob, no_user

    for_ana, for_bob, no_user = anyio.run(main)

    assert [memory["content"] for memory in for_ana["memories"]] == ["Ana works at Nordlicht GmbH."]
    assert for_bob["memories"] == []
    assert "user" in no_user


def test_get_entity_answers_what_memory_knows_about_someone_for_the_pinned_user_only(service_url, tenant):
    gene = EndUserFactory(agent=tenant.agent, external_id="gene")
    EndUserFactory(agent=tenant.agent, external_id="ana")
    sister_graph_create(agent=tenant.agent, user=gene)

    async def main():
        async with mcp_http(service_url, headers=_bearer(tenant, user="gene")) as client:
            found = tool_json(await client.call_tool("get_entity", {"name": "Mia", "include_ended": True}))
            refused = tool_error(await client.call_tool("get_entity", {"name": "Maria", "user": "ana"}))
        async with mcp_http(service_url, headers=_bearer(tenant)) as client:
            for_ana = tool_json(await client.call_tool("get_entity", {"name": "Maria", "user": "ana"}))
            wrong = tool_error(await client.call_tool("get_entity", {"name": 7, "user": "gene"}))
        return found, refused, for_ana, wrong

    found, refused, for_ana, wrong = anyio.run(main)

    assert found["entity"]["name"] == "Maria"
    assert ("works_at", "Globex") in {(item["predicate"], item["object"]) for item in found["relations"]}
    assert [(item["object"], item["why_ended"]) for item in found["ended_relations"]] == [("Acme", "new job")]
    assert "Maria works at Globex" in {fact["content"] for fact in found["facts"]}
    assert "this connection is for user 'gene'" in refused
    assert for_ana["found"] is False and "Globex" not in str(for_ana)
    assert "name" in wrong


def test_get_profile_and_the_profile_resource_read_the_pinned_users_memory_by_category(service_url, tenant):
    gene = EndUserFactory(agent=tenant.agent, external_id="gene")
    ana = EndUserFactory(agent=tenant.agent, external_id="ana")
    fact_filed(tenant.agent, gene, "Gene does pottery", "activities", "pottery")
    fact_filed(tenant.agent, gene, "Gene made a vase on the wheel", "activities", "pottery")
    fact_filed(tenant.agent, ana, "Ana climbs on Sundays", "activities", "climbing")

    async def main():
        async with mcp_http(service_url, headers=_bearer(tenant, user="gene")) as client:
            profile = tool_json(await client.call_tool("get_profile", {"category": ["activities"]}))
            unknown = tool_error(await client.call_tool("get_profile", {"category": ["astrology"]}))
            refused = tool_error(await client.call_tool("get_profile", {"user": "ana"}))
            resource = await client.read_resource("memory://profile")
            by_template = await client.read_resource("memory://users/gene/profile")
        return profile, unknown, refused, resource, by_template

    profile, unknown, refused, resource, by_template = anyio.run(main)

    [activities] = profile["categories"]
    assert activities["category"] == "activities"
    assert [(entry["value"], entry["mentions"]) for entry in activities["entries"]] == [("pottery", 2)]
    assert activities["entries"][0]["holds_now"] is True and len(activities["entries"][0]["memories"]) == 2
    assert "category" in unknown and "astrology" in unknown
    assert "this connection is for user 'gene'" in refused
    assert resource.contents[0].mime_type == "application/json"
    assert json.loads(resource.contents[0].text)["categories"][0]["entries"][0]["value"] == "pottery"
    assert by_template.contents[0].text == resource.contents[0].text and "climbing" not in resource.contents[0].text


def test_get_timeline_tells_what_changed_in_world_time_order_with_its_sources(service_url, tenant):
    gene = EndUserFactory(agent=tenant.agent, external_id="gene")
    EndUserFactory(agent=tenant.agent, external_id="ana")
    sister_graph_create(agent=tenant.agent, user=gene)
    denver = fact_create(
        agent=tenant.agent,
        user=gene,
        scopes=["user"],
        content="Gene lives in Denver",
        world_time=WorldTime(start=date(2019, 1, 1), start_precision="year"),
    )
    fact_world_end(fact=denver, end=date(2023, 5, 1), end_precision="month", reason="moved to Boulder")

    async def main():
        async with mcp_http(service_url, headers=_bearer(tenant, user="gene")) as client:
            mine = tool_json(await client.call_tool("get_timeline", {"time_to": "2024-12-31"}))
            paged = tool_json(await client.call_tool("get_timeline", {"limit": 1}))
            after = tool_json(await client.call_tool("get_timeline", {"limit": 1, "cursor": paged["next_cursor"]}))
            maria = tool_json(await client.call_tool("get_timeline", {"entity": "Mia"}))
            refused = tool_error(await client.call_tool("get_timeline", {"user": "ana"}))
            structured = await client.call_tool("get_timeline", {"entity": "Mia"})
        async with mcp_http(service_url, headers=_bearer(tenant)) as client:
            no_user = tool_error(await client.call_tool("get_timeline", {}))
            for_ana = tool_json(await client.call_tool("get_timeline", {"entity": "Maria", "user": "ana"}))
        return mine, paged, after, maria, refused, structured, no_user, for_ana

    mine, paged, after, maria, refused, structured, no_user, for_ana = anyio.run(main)

    assert [(entry["content"], entry["happened"], entry["at"]) for entry in mine["entries"]] == [
        ("Gene lives in Denver", "started", "2019-01-01"),
        ("Gene lives in Denver", "ended", "2023-05-01"),
    ]
    ended = mine["entries"][1]
    assert (ended["held_from"], ended["held_until"], ended["holds_now"]) == ("2019", "2023-05", False)
    assert ended["reason"] == "moved to Boulder" and ended["placed_by"] == "end"
    assert paged["entries"][0]["content"] == "Gene lives in Denver" and after["entries"][0]["happened"] == "ended"
    assert maria["entity"] == "Maria"
    assert {"Maria works at Acme", "Maria works at Globex"} <= {entry["content"] for entry in maria["entries"]}
    assert structured.structured_content == maria
    assert "this connection is for user 'gene'" in refused
    assert "user" in no_user
    assert for_ana["found"] is False and "Globex" not in str(for_ana)


def test_agent_wide_memory_from_a_user_goes_to_the_review_queue(service_url, tenant):
    assert tenant.agent.agent_memory_from_users == AgentMemoryFromUsers.REVIEW

    async def main():
        async with mcp_http(service_url, headers=_bearer(tenant, user="gene")) as client:
            return tool_json(
                await client.call_tool("save_memory", {"content": "The office closes at 6 pm.", "scope": "agent"})
            )

    result = anyio.run(main)

    assert result["held_for_review"] is True and result["saved"] is False
    held = HeldMemory.objects.get(pk=result["review_id"])
    assert held.agent == tenant.agent and held.content == "The office closes at 6 pm."
    assert not Fact.objects.filter(agent=tenant.agent).exists()


@pytest.mark.parametrize("policy", [SensitiveDataPolicy.WITHHOLD, SensitiveDataPolicy.REDACT])
def test_a_secret_said_in_a_conversation_is_never_handed_back(service_url, policy):
    """Over MCP, over REST and through the bundle; the stored transcript keeps it (docs/security.md)."""
    tenant = tenant_create("agent-secrets", sensitive_data=policy)
    (said,) = conversation_store(
        agent=tenant.agent, user="gene", session="s1", turns=[("user", f"Note this: {WIFI}. And I love kayaking.")]
    )

    async def main():
        async with mcp_http(service_url, headers=_bearer(tenant, user="gene")) as client:
            turns = tool_json(await client.call_tool("search_conversations", {"query": "what is the wifi password?"}))
            bundle = tool_json(await client.call_tool("get_memory_bundle", {"query": "what is the wifi password?"}))
            saved = await client.call_tool("save_memory", {"content": f"Gene says {WIFI}."})
            return turns, bundle, saved

    turns, bundle, saved = anyio.run(main)
    rest = httpx.post(
        f"{service_url}/api/v1/messages/search",
        json={"query": "what is the wifi password?", "user": "gene"},
        headers=_bearer(tenant),
    ).json()

    through_client = MemoryClient(service_url, tenant.key).messages_search(
        query="what is the wifi password?", user="gene"
    )

    shown = turns["messages"][0]["content"]
    assert "hunter2-blue" not in shown and "kayaking" in shown
    assert ("[redacted password or PIN]" in shown) == (policy == SensitiveDataPolicy.REDACT)
    assert "hunter2-blue" not in bundle["text"]
    assert "hunter2-blue" not in rest["results"][0]["message"]["content"]
    assert "hunter2-blue" not in through_client["results"][0]["message"]["content"]
    assert Message.objects.get(pk=said.pk).content.endswith(f"{WIFI}. And I love kayaking.")
    if policy == SensitiveDataPolicy.WITHHOLD:
        assert "not saved" in tool_error(saved)
    else:
        assert "hunter2-blue" not in tool_json(saved)["memory"]["content"]


def test_requests_without_a_valid_key_are_refused_before_the_sdk(service_url, tenant):
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}

    missing = httpx.post(f"{service_url}/mcp", json=initialize, headers=headers)
    wrong = httpx.post(f"{service_url}/mcp", json=initialize, headers=headers | {"X-API-Key": "mem_wrong"})
    conflicting = httpx.post(
        f"{service_url}/mcp",
        json=initialize,
        headers=headers | {"X-API-Key": tenant.key, "Authorization": "Bearer mem_other"},
    )

    assert missing.status_code == 401 and missing.json()["error"]["code"] == "not_authenticated"
    assert missing.headers["WWW-Authenticate"].startswith("Bearer")
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "authentication_failed"
    assert conflicting.status_code == 401


def test_the_optional_server_stream_is_refused_rather_than_held_open(service_url, tenant):
    headers = _bearer(tenant) | {"Accept": "text/event-stream", "MCP-Protocol-Version": "2025-11-25"}

    response = httpx.get(f"{service_url}/mcp", headers=headers, timeout=10)

    assert response.status_code == 405 and response.headers["Allow"] == "POST"
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_the_sdk_client_with_a_wrong_key_gets_an_error_not_a_hang(service_url, tenant):
    async def main():
        async with mcp_http(service_url, headers={"X-API-Key": "mem_wrong"}) as client:
            await client.list_tools()

    with pytest.raises(Exception) as raised:  # noqa: PT011 (the SDK wraps the HTTP 401 in its own errors)
        anyio.run(main)
    assert "401" in repr(raised.value) or isinstance(raised.value, MCPError | BaseExceptionGroup)


def test_mcp_calls_share_the_keys_throttle_with_rest(service_url, tenant, settings):
    settings.API_THROTTLE_RATE = "3/minute"
    headers = _bearer(tenant)

    rest = [httpx.get(f"{service_url}/api/v1/tools", headers=headers).status_code for _ in range(2)]
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    mcp_headers = headers | {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    mcp = [httpx.post(f"{service_url}/mcp", json=call, headers=mcp_headers) for _ in range(2)]

    assert rest == [200, 200]
    assert mcp[0].status_code != 429
    assert mcp[1].status_code == 429 and int(mcp[1].headers["Retry-After"]) >= 1
    assert mcp[1].json()["error"]["code"] == "throttled"


def test_a_body_over_the_api_limit_is_refused(service_url, tenant, settings):
    huge = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "save_memory"}}
    huge["params"]["arguments"] = {"content": "x" * (11 * 1024 * 1024)}
    headers = _bearer(tenant) | {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}

    response = httpx.post(f"{service_url}/mcp", json=huge, headers=headers, timeout=60)

    assert response.status_code == 413
    assert response.json()["error"] == {
        "code": "request_too_large",
        "message": f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes.",
        "fields": {"body": [f"at most {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes"]},
    }
    assert response.headers["X-Request-ID"]
    assert not Fact.objects.exists() and not EndUser.objects.exists()


def test_a_key_revoked_in_another_process_is_refused_on_the_next_mcp_request(service_url, tenant):
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = _bearer(tenant) | {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    served = [httpx.post(f"{service_url}/mcp", json=call, headers=headers).status_code for _ in range(2)]

    subprocess.run(
        [sys.executable, str(REPO_DIR / "manage.py"), "api_key", "revoke", tenant.agent.api_keys.get().prefix],
        env=os.environ | {"DATABASE_URL": database_url_of_test_database()},
        cwd=REPO_DIR,
        check=True,
        capture_output=True,
        timeout=120,
    )
    refused = httpx.post(f"{service_url}/mcp", json=call, headers=headers)

    assert served == [200, 200]
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "authentication_failed"
