"""`agent-memory-mcp`, the stdio MCP server of the client package, started as a desktop client starts it (the console
script on PATH, configured by the environment) and driven by the mcp SDK's stdio client: the same tools as /mcp,
every one called through the REST API of the live stack, the resource, and errors naming the argument."""

from __future__ import annotations

import subprocess

import anyio
import pytest

from facts.models import Fact
from tests.mcp_server.conftest import (
    conversation_store,
    mcp_http,
    mcp_stdio,
    reflection_store,
    stdio_server,
    tool_error,
    tool_json,
)

pytestmark = pytest.mark.django_db(transaction=True)


def _environment(service_url: str, key: str, **extra: str) -> dict[str, str]:
    return {"MEMORY_URL": service_url, "MEMORY_API_KEY": key} | extra


def test_the_stdio_server_offers_what_mcp_over_http_offers(service_url, tenant, console_scripts_dir):
    parameters = stdio_server(
        command="agent-memory-mcp",
        env=_environment(service_url, tenant.key, MEMORY_USER="gene"),
        scripts_dir=console_scripts_dir,
    )

    async def main():
        async with mcp_stdio(parameters) as stdio:
            over_stdio = (await stdio.list_tools()).tools
        async with mcp_http(
            service_url, headers={"Authorization": f"Bearer {tenant.key}", "X-Memory-User": "gene"}
        ) as http:
            over_http = (await http.list_tools()).tools
        return over_stdio, over_http

    over_stdio, over_http = anyio.run(main)

    assert [tool.model_dump() for tool in over_stdio] == [tool.model_dump() for tool in over_http]


def test_every_tool_and_the_resource_over_stdio(service_url, tenant, console_scripts_dir):
    conversation_store(
        agent=tenant.agent, user="gene", session="s1", turns=[("user", "We went kayaking on Lake Annecy in May.")]
    )
    reflection_store(agent=tenant.agent, user="gene", content="Gene prefers short answers.")
    parameters = stdio_server(
        command="agent-memory-mcp",
        env=_environment(service_url, tenant.key, MEMORY_USER="gene"),
        scripts_dir=console_scripts_dir,
    )

    async def main():
        async with mcp_stdio(parameters) as client:
            saved = tool_json(await client.call_tool("save_memory", {"content": "Gene's birthday is March 15th."}))
            fact_id = saved["memory"]["id"]
            found = tool_json(await client.call_tool("search_memory", {"query": "When is Gene's birthday?"}))
            updated = tool_json(
                await client.call_tool("update_memory", {"id": fact_id, "content": "Gene's birthday is March 16th."})
            )
            turns = tool_json(await client.call_tool("search_conversations", {"query": "kayaking"}))
            context = tool_json(await client.call_tool("get_memory_context", {}))
            bundle = tool_json(await client.call_tool("get_memory_bundle", {"query": "Gene's birthday"}))
            deleted = tool_json(await client.call_tool("delete_memory", {"id": updated["memory"]["id"]}))
            wrong = tool_error(await client.call_tool("search_memory", {"query": "tea", "top_k": "many"}))
            other_user = tool_error(await client.call_tool("search_memory", {"query": "tea", "user": "ana"}))
            unknown = tool_error(await client.call_tool("forget_everything", {}))
            resource = await client.read_resource("memory://context")
            return saved, found, updated, turns, context, bundle, deleted, wrong, other_user, unknown, resource

    saved, found, updated, turns, context, bundle, deleted, wrong, other_user, unknown, resource = anyio.run(main)

    assert saved["saved"] is True
    assert found["memories"][0]["content"] == "Gene's birthday is March 15th."
    assert updated["memory"]["content"] == "Gene's birthday is March 16th."
    assert "Lake Annecy" in turns["messages"][0]["content"]
    assert "Gene prefers short answers." in context["text"]
    assert "March 16th" in bundle["text"]
    assert deleted["deleted"] is True
    assert "top_k" in wrong
    assert "user" in other_user and "gene" in other_user
    assert "forget_everything" in unknown
    assert "Gene prefers short answers." in resource.contents[0].text
    assert not Fact.objects.filter(valid_to__isnull=True).exists()


def test_a_wrong_key_or_an_unreachable_service_is_a_tool_error_not_a_crash(service_url, tenant, console_scripts_dir):
    async def call(parameters):
        async with mcp_stdio(parameters) as client:
            return await client.call_tool("search_memory", {"query": "tea", "user": "gene"})

    refused = anyio.run(
        call,
        stdio_server(
            command="agent-memory-mcp",
            env=_environment(service_url, "mem_wrong"),
            scripts_dir=console_scripts_dir,
        ),
    )
    unreachable = anyio.run(
        call,
        stdio_server(
            command="agent-memory-mcp",
            env=_environment("http://127.0.0.1:9", tenant.key),
            scripts_dir=console_scripts_dir,
        ),
    )

    assert "401" in tool_error(refused)
    assert "cannot be reached" in tool_error(unreachable)


def test_without_an_api_key_the_script_says_what_to_set(console_scripts_dir):
    completed = subprocess.run(
        [str(console_scripts_dir / "agent-memory-mcp")], env={}, capture_output=True, text=True, timeout=60
    )

    assert completed.returncode != 0
    assert "MEMORY_API_KEY" in completed.stderr
