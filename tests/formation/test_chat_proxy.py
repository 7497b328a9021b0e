"""The chat proxy with the OpenAI Python SDK as the client, the service on a live server and the upstream LLM a local
OpenAI-compatible HTTP stub (the only thing faked). Database, Redis and embeddings are real."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai
import pytest

from agents.models import Agent
from agents.services.api_keys import api_key_create
from conversations.models import Message, Session
from facts.services.facts import fact_create
from reflections.models import MemoryScope
from reflections.services.reflections import reflection_create
from tests.factories import AgentFactory, EndUserFactory

REPLY = "Sleep in a dark room right after your shift."


class StubLLM:
    """An OpenAI-compatible /chat/completions on 127.0.0.1 that records every request body it receives."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.fail_with_status: int | None = None
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                if stub.fail_with_status:
                    self._send(stub.fail_with_status, {"error": {"message": "model overloaded", "type": "server"}})
                elif body.get("stream"):
                    self._stream(body)
                else:
                    self._send(
                        200,
                        {
                            "id": "chatcmpl-stub",
                            "object": "chat.completion",
                            "created": 1763800000,
                            "model": body["model"],
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": REPLY},
                                }
                            ],
                            "usage": {"prompt_tokens": 10, "completion_tokens": 9, "total_tokens": 19},
                        },
                    )

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, body: dict) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                words = REPLY.split(" ")
                for index, word in enumerate(words):
                    chunk = {
                        "id": "chatcmpl-stream",
                        "object": "chat.completion.chunk",
                        "created": 1763800000,
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "delta": {"content": word if index == 0 else " " + word},
                                "finish_reason": "stop" if index == len(words) - 1 else None,
                            }
                        ],
                    }
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")

            def log_message(self, format: str, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> StubLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def stub_llm(settings) -> Iterator[StubLLM]:
    with StubLLM() as stub:
        settings.LLM_PROVIDER = "openai"
        settings.LLM_BASE_URL = stub.base_url
        settings.LLM_API_KEY = "upstream-secret"
        yield stub


@pytest.fixture
def sdk(live_server) -> Iterator[tuple[openai.OpenAI, Agent]]:
    """The SDK keeps HTTP connections alive; closing them lets the live server's request threads end and release
    their database connections before the test database is dropped."""
    agent = AgentFactory(external_id="agent-chat")
    gene = EndUserFactory(agent=agent, external_id="gene")
    fact_create(agent=agent, user=gene, scopes=["user"], content="Gene works night shifts at Lyon hospital")
    reflection_create(agent=agent, scope=MemoryScope.USER, user=gene, content="Gene prefers short, practical tips.")
    _, raw_key = api_key_create(agent=agent)
    with openai.OpenAI(base_url=f"{live_server.url}/v1", api_key=raw_key, max_retries=0) as client:
        yield client, agent


QUESTION = [
    {"role": "system", "content": "You are a helpful health coach."},
    {"role": "user", "content": "Any tips for coping with my night shifts?"},
]


def _stored(agent: Agent, session: str) -> list[tuple[str, str]]:
    return list(
        Message.objects.filter(session__agent=agent, session__external_id=session)
        .order_by("id")
        .values_list("role", "content")
    )


@pytest.mark.django_db(transaction=True)
def test_completion_injects_memory_forwards_params_and_stores_both_turns(stub_llm, sdk):
    client, agent = sdk

    completion = client.chat.completions.create(
        model="stub-model",
        messages=QUESTION,
        temperature=0.2,
        extra_body={"memory_user": "gene", "memory_session": "s-1", "memory_top_k": 3},
    )

    assert completion.choices[0].message.content == REPLY
    memory = completion.model_extra["memory"]
    assert [fact["content"] for fact in memory["facts"]] == ["Gene works night shifts at Lyon hospital"]
    assert memory["context"]["included"] and len(memory["context"]["reflection_ids"]) == 1
    assert len(memory["stored_message_ids"]) == 2

    upstream = stub_llm.requests[0]
    assert upstream["path"] == "/v1/chat/completions" and upstream["auth"] == "Bearer upstream-secret"
    body = upstream["body"]
    assert body["temperature"] == 0.2 and body["model"] == "stub-model"
    assert not any(key.startswith("memory_") for key in body)
    assert [m["role"] for m in body["messages"]] == ["system", "system", "user"]
    assert body["messages"][0] == QUESTION[0]  # the caller's prompt prefix is untouched
    injected = body["messages"][1]["content"]
    assert "<UserMemory>" in injected and "Gene prefers short, practical tips." in injected
    assert "- Gene works night shifts at Lyon hospital" in injected

    assert _stored(agent, "s-1") == [("user", QUESTION[1]["content"]), ("assistant", REPLY)]
    session = Session.objects.get(agent=agent, external_id="s-1")
    assert session.user.external_id == "gene" and session.message_count == 2


@pytest.mark.django_db(transaction=True)
def test_streaming_passes_chunks_through_then_memory_and_stores_the_whole_reply(stub_llm, sdk):
    client, agent = sdk

    chunks = list(
        client.chat.completions.create(
            model="stub-model",
            messages=QUESTION,
            stream=True,
            extra_body={"memory_user": "gene", "memory_session": "s-stream"},
        )
    )

    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert text == REPLY
    assert len([chunk for chunk in chunks if chunk.choices]) == len(REPLY.split(" "))
    final = chunks[-1]
    assert final.choices == [] and final.model_extra["memory"]["facts"][0]["content"].startswith("Gene works")
    assert len(final.model_extra["memory"]["stored_message_ids"]) == 2
    assert stub_llm.requests[0]["body"]["stream"] is True
    assert _stored(agent, "s-stream") == [("user", QUESTION[1]["content"]), ("assistant", REPLY)]


@pytest.mark.django_db(transaction=True)
def test_without_memory_session_nothing_is_stored_and_agent_switches_are_respected(stub_llm, sdk):
    client, agent = sdk
    Agent.objects.filter(pk=agent.pk).update(rag_enabled=False, always_in_context_enabled=False)

    completion = client.chat.completions.create(
        model="stub-model", messages=QUESTION, extra_body={"memory_user": "gene"}
    )

    memory = completion.model_extra["memory"]
    assert memory["facts"] == [] and memory["context"]["enabled"] is False and memory["stored_message_ids"] == []
    assert stub_llm.requests[0]["body"]["messages"] == QUESTION
    assert not Message.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_upstream_failure_is_a_502_in_the_error_format_and_stores_nothing(stub_llm, sdk):
    client, agent = sdk
    stub_llm.fail_with_status = 500

    with pytest.raises(openai.APIStatusError) as failure:
        client.chat.completions.create(
            model="stub-model", messages=QUESTION, extra_body={"memory_user": "gene", "memory_session": "s-fail"}
        )

    assert failure.value.status_code == 502
    assert failure.value.body["code"] == "upstream_error" and "model overloaded" in failure.value.body["message"]
    assert not Message.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_offline_llm_is_a_503_and_bad_input_names_the_field(settings, sdk):
    client, agent = sdk
    settings.LLM_PROVIDER = "offline"

    with pytest.raises(openai.APIStatusError) as offline:
        client.chat.completions.create(model="m", messages=QUESTION)
    with pytest.raises(openai.BadRequestError) as bad_role:
        client.chat.completions.create(model="m", messages=[{"role": "robot", "content": "hi"}])
    with pytest.raises(openai.BadRequestError) as unknown_session:
        client.chat.completions.create(model="m", messages=QUESTION, extra_body={"memory_session": "new-session"})

    assert offline.value.status_code == 503 and offline.value.body["code"] == "llm_unavailable"
    assert "messages.0.role" in bad_role.value.body["fields"]
    assert "memory_user" in unknown_session.value.body["fields"]


@pytest.mark.django_db(transaction=True)
def test_a_turn_longer_than_a_message_may_be_is_stored_cut_and_marked(stub_llm, sdk, settings):
    """The model gets the whole question; memory keeps its beginning, within the message limit, like any message."""
    client, agent = sdk
    settings.MESSAGE_MAX_CHARS = 40
    question = "Any tips for coping with my night shifts at the hospital in Lyon?"

    client.chat.completions.create(
        model="stub-model",
        messages=[{"role": "user", "content": question}],
        extra_body={"memory_user": "gene", "memory_session": "s-long"},
    )

    assert question in json.dumps(stub_llm.requests[0]["body"])
    stored = Message.objects.get(session__agent=agent, session__external_id="s-long", role="user")
    assert stored.content == "Any tips for coping with my night shifts"
    assert stored.metadata["truncated_from_chars"] == len(question)
