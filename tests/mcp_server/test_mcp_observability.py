"""/mcp seen from the monitoring stack as the REST API is: its requests counted under the route "mcp", its tool calls
by tool and outcome, an X-Request-ID on every response (the caller's when it sends one), and that id with the agent
in the log lines its tool calls write."""

from __future__ import annotations

import dataclasses

import anyio
import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from core.runtime.logging import current_agent, current_request_id
from mcp_server import tools
from tests.mcp_server.conftest import mcp_http, tool_error, tool_json

pytestmark = pytest.mark.django_db(transaction=True)
TOKEN = "a-scraper-token-of-some-length"
JSON_RPC_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


@pytest.fixture(autouse=True)
def metrics_token(settings):
    settings.METRICS_BEARER_TOKEN = TOKEN
    settings.METRICS_ALLOWED_NETWORKS = []


def _samples(service_url: str) -> dict[tuple, float]:
    scraped = httpx.get(f"{service_url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(scraped)
        for sample in family.samples
    }


def _grown(before: dict, after: dict, name: str, **labels: str) -> float:
    key = (name, tuple(sorted(labels.items())))
    return after.get(key, 0.0) - before.get(key, 0.0)


def test_requests_and_tool_calls_are_counted_by_route_tool_and_outcome(service_url, tenant):
    before = _samples(service_url)

    async def main():
        async with mcp_http(service_url, headers={"X-API-Key": tenant.key, "X-Memory-User": "gene"}) as client:
            tool_json(await client.call_tool("search_memory", {"query": "birthday"}))
            tool_error(await client.call_tool("search_memory", {"query": ""}))
            tool_error(await client.call_tool("made_up_tool", {}))

    anyio.run(main)
    refused = httpx.post(f"{service_url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    after = _samples(service_url)

    assert refused.status_code == 401
    calls = "memory_mcp_tool_calls_total"
    assert _grown(before, after, calls, tool="search_memory", outcome="ok") == 1
    assert _grown(before, after, calls, tool="search_memory", outcome="tool_error") == 1
    assert _grown(before, after, calls, tool="other", outcome="tool_error") == 1  # no made-up name becomes a label
    requests = "memory_http_requests_total"
    assert _grown(before, after, requests, route="mcp", method="POST", status="200") >= 3
    assert _grown(before, after, requests, route="mcp", method="POST", status="401") == 1
    assert _grown(before, after, "memory_http_request_duration_seconds_count", route="mcp", method="POST") >= 4


def test_every_response_carries_a_request_id_and_the_tool_call_logs_it(service_url, tenant, monkeypatch):
    seen = []
    search = tools.READ_TOOLS_BY_NAME["search_conversations"]

    def search_seeing_the_log_context(agent, target, arguments):
        # What core.runtime.logging.RequestIdFilter puts in every log line the call writes.
        seen.append((current_request_id.get(), current_agent.get()))
        return search.run(agent, target, arguments)

    observed = dataclasses.replace(search, run=search_seeing_the_log_context)
    monkeypatch.setitem(tools.READ_TOOLS_BY_NAME, "search_conversations", observed)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    call["params"] = {"name": "search_conversations", "arguments": {"query": "trip", "user": "gene"}}
    headers = JSON_RPC_HEADERS | {"X-API-Key": tenant.key}

    given = httpx.post(f"{service_url}/mcp", json=call, headers=headers | {"X-Request-ID": "trace-42"})
    made = httpx.post(f"{service_url}/mcp", json=call, headers=headers | {"X-Request-ID": "not a token!"})
    refused = httpx.post(f"{service_url}/mcp", json=call, headers=JSON_RPC_HEADERS)

    assert given.status_code == 200 and given.headers["X-Request-ID"] == "trace-42"
    assert len(made.headers["X-Request-ID"]) == 32 and made.headers["X-Request-ID"] != "not a token!"
    assert refused.status_code == 401 and len(refused.headers["X-Request-ID"]) == 32
    assert seen == [("trace-42", tenant.agent.external_id), (made.headers["X-Request-ID"], tenant.agent.external_id)]
