"""AsyncMemoryClient (clients/python, on httpx) against a live server: every method once, the error type, and a
throttled request's Retry-After, which both clients honour through the same shared code."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from conversations.models import Message
from conversations.services.message_embeddings import messages_embed_missing
from tests.factories import AgentFactory
from tests.memory_client_support import AsyncMemoryClient, MemoryAPIError, MemoryClient, api_key_for


@pytest.fixture
def api_key(db) -> str:
    return api_key_for(agent=AgentFactory(external_id="agent-async"))


async def _ingest(memory: AsyncMemoryClient) -> dict:
    created = await memory.session_create(user="gene", session="chat 1")
    turns = [
        {"role": "assistant", "content": "Did you do anything fun last weekend?", "idempotency_key": "m-1"},
        {"role": "user", "content": "Yes, we went kayaking on Lake Annecy.", "idempotency_key": "m-2"},
    ]
    first = await memory.messages_append("chat 1", turns)
    retry = await memory.messages_append("chat 1", turns)
    listed = [message["content"] async for message in memory.messages_list("chat 1", page_size=1)]
    return {"created": created, "first": first, "retry": retry, "listed": listed, "turns": turns}


@pytest.mark.django_db(transaction=True)
def test_every_method_of_the_async_client(live_server, api_key):
    async def ingestion() -> dict:
        async with AsyncMemoryClient(live_server.url, api_key, timeout=60) as memory:
            return await _ingest(memory)

    ingested = asyncio.run(ingestion())
    # Turn-level search needs the messages' embeddings, which the worker computes in production.
    messages_embed_missing(message_ids=Message.objects.values_list("pk", flat=True))

    async def the_rest() -> dict:
        async with AsyncMemoryClient(live_server.url, api_key, timeout=60) as memory:
            out: dict = {}
            out["session"] = await memory.session_get("chat 1")
            out["formed"] = await memory.session_form("chat 1")
            out["message_hits"] = await memory.messages_search(query="Where did Gene go kayaking?", user="gene")
            saved = await memory.fact_create(content="Gene's birthday is March 15th", user="gene", tags=["profile"])
            out["again"] = await memory.fact_create(content="Gene's birthday is March 15th", user="gene")
            out["saved"], out["got"] = saved, await memory.fact_get(saved["id"])
            out["hits"] = await memory.search(query="When was Gene born?", user="gene", top_k=1, mode="semantic")
            out["timing"] = memory.server_timing
            revised = await memory.fact_update(saved["id"], content="Gene's birthday is March 16th", reason="fixed")
            out["history"] = await memory.fact_history(revised["id"])
            out["listed"] = [fact async for fact in memory.facts_list(user="gene", tag="profile", page_size=1)]
            await memory.fact_delete(revised["id"])
            out["after_delete"] = [fact async for fact in memory.facts_list(user="gene")]
            out["context"] = await memory.context(user="gene", session="chat 1")
            out["unchanged"] = await memory.context(user="gene", session="chat 1", if_none_match=out["context"]["etag"])
            out["bundle"] = await memory.bundle(query="kayaking", user="gene", session="chat 1", token_budget=500)
            out["tools"] = await memory.tools()
            out["tool_call"] = await memory.tool_call(
                name="save_memory", arguments={"content": "Gene is vegan"}, user="gene"
            )
            out["closed"] = await memory.session_close("chat 1")
            lived = await memory.fact_create(content="Gene lived in Oslo", user="gene", world_time={"start": "2015"})
            out["ended"] = await memory.fact_update(lived["id"], world_time={"start": "2015", "end": "2018"})
            out["then"] = await memory.search(query="Oslo", user="gene", holds_at="2016-01-01", mode="text")
            out["timeline"] = [entry async for entry in memory.user_timeline("gene", time_to="2020-01-01")]
            out["entities"] = [entity async for entity in memory.entities_list(user="gene")]
            out["profile"] = await memory.profile("gene", categories=["activities"], include_history=True)
            out["agent_profile"] = await memory.profile(None)
            return out

    out = asyncio.run(the_rest())

    assert ingested["created"]["session"] == "chat 1" and ingested["created"]["user"] == "gene"
    assert ingested["first"]["created_count"] == 2 and ingested["retry"]["created_count"] == 0
    assert ingested["listed"] == [turn["content"] for turn in ingested["turns"]]
    assert out["session"]["message_count"] == 2 and out["formed"]["session"]["session"] == "chat 1"
    top_message = out["message_hits"]["results"][0]
    assert top_message["message"]["content"] == "Yes, we went kayaking on Lake Annecy."
    assert out["again"]["id"] == out["saved"]["id"] == out["got"]["id"] and out["saved"]["scopes"] == ["user"]
    assert out["hits"]["results"][0]["fact"]["id"] == out["saved"]["id"]
    assert {"vector_sql", "hits_sql", "app"} <= set(out["timing"])
    assert [v["content"] for v in out["history"]["versions"]] == [
        "Gene's birthday is March 15th",
        "Gene's birthday is March 16th",
    ]
    assert [fact["content"] for fact in out["listed"]] == ["Gene's birthday is March 16th"]
    assert all(fact["content"] != "Gene's birthday is March 16th" for fact in out["after_delete"])
    assert set(out["context"]["parts"]) == {"agent", "user", "session"} and out["unchanged"] is None
    assert out["bundle"]["token_budget"] == 500 and out["bundle"]["tokens_used"] <= 500
    assert {"search_memory", "save_memory"} <= {tool["function"]["name"] for tool in out["tools"]}
    assert out["tool_call"]["ok"] and out["tool_call"]["result"]["saved"] is True
    assert out["closed"]["closed_at"] is not None
    assert out["ended"]["world_time"]["end"] == "2018-01-01" and out["ended"]["world_time"]["holds_now"] is False
    assert out["then"]["results"][0]["fact"]["content"] == "Gene lived in Oslo"
    assert [(entry["happened"], entry["at"]) for entry in out["timeline"]] == [
        ("started", "2015-01-01"),
        ("ended", "2018-01-01"),
    ]
    assert out["entities"] == []
    assert out["profile"]["user"] == "gene" and out["profile"]["categories"] == []  # nothing filed yet
    assert out["agent_profile"]["user"] is None and out["agent_profile"]["attributes"] == []
    assert all("reasons" in hit for hit in out["hits"]["results"] + out["message_hits"]["results"])


@pytest.mark.django_db(transaction=True)
def test_async_errors_carry_status_code_and_fields(live_server, api_key):
    async def scenario() -> list[MemoryAPIError]:
        errors = []
        async with AsyncMemoryClient(live_server.url, api_key) as memory:
            for attempt in (
                memory.messages_append("s", [{"role": "robot", "content": "hello"}], user="gene"),
                memory.session_get("nope"),
                memory.fact_create(content="   ", user="gene"),
            ):
                with pytest.raises(MemoryAPIError) as caught:
                    await attempt
                errors.append(caught.value)
        async with httpx.AsyncClient() as own_http:  # a caller's own httpx client: used, and left open for it
            stranger = AsyncMemoryClient(live_server.url, "not-a-key", http_client=own_http)
            with pytest.raises(MemoryAPIError) as refused:
                await stranger.tools()
            await stranger.aclose()
            errors.append(refused.value)
            assert not own_http.is_closed
        return errors

    bad_role, not_found, empty, unauthenticated = asyncio.run(scenario())

    assert bad_role.status == 400 and "messages.0.role" in bad_role.fields
    assert not_found.status == 404 and not_found.code == "not_found"
    assert empty.status == 400 and "content" in empty.fields
    assert unauthenticated.status == 401
    assert Message.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_throttled_request_waits_for_retry_after_then_succeeds(live_server, api_key, settings):
    settings.API_THROTTLE_RATE = "2/3s"

    async def scenario() -> tuple[MemoryAPIError, list]:
        async with (
            AsyncMemoryClient(live_server.url, api_key, max_retries=0) as impatient,
            AsyncMemoryClient(live_server.url, api_key, max_retries=3, max_retry_wait=5) as patient,
        ):
            with pytest.raises(MemoryAPIError) as throttled:
                for _ in range(5):  # two per window: the third at the latest is refused
                    await impatient.tools()
            return throttled.value, await patient.tools()

    throttled, tools = asyncio.run(scenario())

    assert throttled.status == 429 and throttled.code == "throttled"
    assert throttled.retry_after is not None and 1 <= throttled.retry_after <= 3
    assert {tool["function"]["name"] for tool in tools} >= {"search_memory"}


@pytest.mark.django_db(transaction=True)
def test_a_wait_longer_than_max_retry_wait_is_raised_at_once_by_both_clients(live_server, api_key, settings):
    settings.API_THROTTLE_RATE = "1/30d"
    sync = MemoryClient(live_server.url, api_key, max_retries=5, max_retry_wait=10)
    sync.tools()

    with pytest.raises(MemoryAPIError) as sync_throttled:
        sync.tools()

    async def scenario() -> MemoryAPIError:
        async with AsyncMemoryClient(live_server.url, api_key, max_retries=5, max_retry_wait=10) as memory:
            with pytest.raises(MemoryAPIError) as throttled:
                await memory.tools()
            return throttled.value

    async_throttled = asyncio.run(scenario())

    for error in (sync_throttled.value, async_throttled):
        assert error.status == 429 and error.retry_after is not None and error.retry_after > 10
