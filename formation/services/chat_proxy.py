"""The memory-augmented chat proxy: an OpenAI-compatible chat completion that adds memory to the request, forwards it
to the configured OpenAI-compatible LLM (LLM_BASE_URL, LLM_API_KEY) and stores the user's last message and the reply
in the session, through ingestion, so that formation and message embedding pick them up.

Memory goes in as one system message placed after the caller's own leading system messages, so the caller's prompt
prefix (and any upstream prompt cache on it) is unchanged. Without an upstream LLM (LLM_PROVIDER=offline) the proxy
answers 503 `llm_unavailable` rather than a made-up reply: an agent must not mistake a canned answer for a model's.
When the upstream call fails nothing is stored, so a retried request does not store the user's message twice."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, cast

import openai
from django.conf import settings
from openai.types.chat import ChatCompletionChunk, ChatCompletionMessageParam

from agents.models import Agent, EndUser
from conversations.models import Session
from conversations.selectors.memory_scope import memory_scope_resolve
from conversations.services.ingestion import MessageInput
from core.api.errors import error_body
from core.exceptions import ApplicationError
from core.llm.limits import text_cap
from core.llm.tokens import count_tokens
from core.safety.fencing import MEMORY_NOTICE_BLOCK, memory_text_quote
from facts.selectors import facts_search
from formation.services.ingestion import session_messages_ingest
from reflections.selectors.context import memory_context_get

logger = logging.getLogger(__name__)

MEMORY_PREAMBLE = (
    "Long-term memory about this agent, user and conversation follows. Use it when it helps to answer; do not "
    "mention it unless asked."
)
LEADING_ROLES = ("system", "developer")


class ChatUpstreamError(ApplicationError):
    """The upstream LLM is not configured, unreachable or refused the request; rendered in the one error format."""

    def __init__(self, message: str, *, status_code: int, code: str) -> None:
        super().__init__(message, code=code)
        self.status_code = status_code


@dataclass(frozen=True)
class ChatMemoryOptions:
    user_external_id: str | None = None
    session_external_id: str | None = None
    top_k: int = 5
    min_similarity: float | None = None
    recency_weight: float = 0.0


@dataclass
class InjectedMemory:
    """What memory was added to a request: the text of the system message and the `memory` field of the reply."""

    text: str
    used: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ChatRequest:
    model: str
    messages: list[dict[str, Any]]
    passthrough: dict[str, Any]
    memory: ChatMemoryOptions


@lru_cache(maxsize=4)
def _upstream_client(base_url: str, api_key: str, timeout: float) -> openai.OpenAI:
    # No SDK retries: the agent calling the proxy decides whether to retry, and each attempt is one upstream call.
    return openai.OpenAI(base_url=base_url or None, api_key=api_key or "not-needed", timeout=timeout, max_retries=0)


def chat_upstream_client() -> openai.OpenAI:
    if settings.LLM_PROVIDER != "openai":
        raise ChatUpstreamError(
            "No upstream LLM is configured for the chat proxy: set LLM_BASE_URL and LLM_API_KEY (LLM_PROVIDER=openai).",
            status_code=503,
            code="llm_unavailable",
        )
    return _upstream_client(settings.LLM_BASE_URL, settings.LLM_API_KEY, settings.LLM_TIMEOUT_SECONDS)


def message_text(message: dict[str, Any]) -> str:
    """The text of an OpenAI message whose content is a string or a list of parts (text parts kept)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    return next((message_text(m) for m in reversed(messages) if m.get("role") == "user"), "")


def _scope_resolve(*, agent: Agent, options: ChatMemoryOptions) -> tuple[EndUser | None, Session | None]:
    try:
        target = memory_scope_resolve(
            agent=agent, user_external_id=options.user_external_id, session_external_id=options.session_external_id
        )
    except ApplicationError as error:
        raise ApplicationError(
            error.message, fields={f"memory_{name}": v for name, v in error.fields.items()}
        ) from None
    if options.session_external_id and target.session is None and not options.user_external_id:
        raise ApplicationError(
            f"session {options.session_external_id!r} does not exist yet; name its user to create it.",
            fields={"memory_user": ["required to create a session"]},
        )
    return target.user, target.session


def chat_memory_gather(
    *, agent: Agent, user: EndUser | None, session: Session | None, query: str, options: ChatMemoryOptions
) -> InjectedMemory:
    context = memory_context_get(agent=agent, user=user, session=session)
    hits = []
    if agent.rag_enabled and options.top_k > 0 and query.strip():
        hits = facts_search(
            agent=agent,
            user=user,
            query=query,
            top_k=options.top_k,
            min_similarity=options.min_similarity,
            recency_weight=options.recency_weight,
        )
    sections = [context.text] if context.text else []
    if hits:
        sections.append(
            "\n".join(
                ["<RelevantFacts>", *(f"- {memory_text_quote(hit.fact.content)}" for hit in hits), "</RelevantFacts>"]
            )
        )
    if sections and not context.text:  # the context block carries the notice itself
        sections.insert(0, MEMORY_NOTICE_BLOCK)
    text = "\n".join([MEMORY_PREAMBLE, *sections]) if sections else ""
    parts = context.parts if context.enabled else {}
    used = {
        "user": user.external_id if user else options.user_external_id,
        "session": options.session_external_id,
        "context": {
            "enabled": context.enabled,
            "included": bool(context.text),
            "token_count": context.token_count,
            "etag": context.etag,
            "blob_versions": {scope: part["blob_version"] for scope, part in parts.items() if part},
            "reflection_ids": [r["id"] for part in parts.values() if part for r in part["recent_reflections"]],
        },
        "facts": [
            {"id": hit.fact.pk, "content": hit.fact.content, "score": hit.score, "similarity": hit.similarity}
            for hit in hits
        ],
        "rag_enabled": agent.rag_enabled,
        "injected_tokens": count_tokens(text),
        "stored_message_ids": [],
    }
    return InjectedMemory(text=text, used=used)


def chat_messages_with_memory(*, messages: list[dict[str, Any]], memory_text: str) -> list[dict[str, Any]]:
    if not memory_text:
        return list(messages)
    position = 0
    while position < len(messages) and messages[position].get("role") in LEADING_ROLES:
        position += 1
    return [*messages[:position], {"role": "system", "content": memory_text}, *messages[position:]]


def _upstream_error(error: openai.OpenAIError) -> ChatUpstreamError:
    if isinstance(error, openai.APITimeoutError):
        return ChatUpstreamError(f"The upstream LLM timed out: {error}", status_code=504, code="upstream_timeout")
    if isinstance(error, openai.APIStatusError):
        status_code = error.status_code if 400 <= error.status_code < 500 else 502
        return ChatUpstreamError(
            f"The upstream LLM answered {error.status_code}: {error.message}",
            status_code=status_code,
            code="upstream_error",
        )
    return ChatUpstreamError(f"The upstream LLM is unreachable: {error}", status_code=502, code="upstream_unavailable")


def _turn(*, role: str, text: str, metadata: dict) -> MessageInput:
    """A turn as stored: within MESSAGE_MAX_CHARS like any message (the model already had the whole of it; memory
    keeps the beginning, marked as cut)."""
    if len(text) <= settings.MESSAGE_MAX_CHARS:
        return MessageInput(role=role, content=text, metadata=metadata)
    return MessageInput(
        role=role,
        content=text_cap(text=text, chars=settings.MESSAGE_MAX_CHARS),
        metadata=metadata | {"truncated_from_chars": len(text)},
    )


def _turns_store(
    *, agent: Agent, options: ChatMemoryOptions, user_text: str, reply_text: str, model: str, completion_id: str
) -> list[int]:
    if not options.session_external_id:
        return []
    metadata = {"source": "chat_proxy", "model": model, "completion_id": completion_id}
    turns = [
        _turn(role=role, text=text, metadata=metadata)
        for role, text in (("user", user_text), ("assistant", reply_text))
        if text.strip()
    ]
    if not turns:
        return []
    result = session_messages_ingest(
        agent=agent,
        user_external_id=options.user_external_id,
        session_external_id=options.session_external_id,
        messages=turns,
    )
    return [message.pk for message in result.messages]


def _prepare(*, agent: Agent, request: ChatRequest) -> tuple[openai.OpenAI, InjectedMemory, str]:
    user, session = _scope_resolve(agent=agent, options=request.memory)
    client = chat_upstream_client()
    user_text = _last_user_text(request.messages)
    memory = chat_memory_gather(agent=agent, user=user, session=session, query=user_text, options=request.memory)
    return client, memory, user_text


def _upstream_messages(*, request: ChatRequest, memory: InjectedMemory) -> list[ChatCompletionMessageParam]:
    # The caller's messages as it sent them (the API checked their shape): what the SDK's TypedDicts describe.
    return cast(
        list[ChatCompletionMessageParam],
        chat_messages_with_memory(messages=request.messages, memory_text=memory.text),
    )


def chat_completion_proxy(*, agent: Agent, request: ChatRequest) -> dict[str, Any]:
    """A non-streaming completion: the upstream reply as the upstream sent it, plus `memory`."""
    client, memory, user_text = _prepare(agent=agent, request=request)
    try:
        completion = client.chat.completions.create(
            model=request.model,
            messages=_upstream_messages(request=request, memory=memory),
            stream=False,
            extra_body=request.passthrough,
        )
    except openai.OpenAIError as error:
        raise _upstream_error(error) from error
    reply_text = (completion.choices[0].message.content or "") if completion.choices else ""
    memory.used["stored_message_ids"] = _turns_store(
        agent=agent,
        options=request.memory,
        user_text=user_text,
        reply_text=reply_text,
        model=completion.model or request.model,
        completion_id=completion.id,
    )
    return {**completion.to_dict(mode="json"), "memory": memory.used}


def _sse(data: dict[str, Any] | str) -> bytes:
    return f"data: {data if isinstance(data, str) else json.dumps(data, separators=(',', ':'))}\n\n".encode()


def chat_completion_proxy_stream(*, agent: Agent, request: ChatRequest) -> Iterator[bytes]:
    """A streaming completion as server-sent events: the upstream chunks as they arrive, then one last chunk with no
    choices and the `memory` field (the stored turns are known only then), then [DONE]. The upstream request is made
    before this returns, so a refused request is an ordinary error response, not a broken stream."""
    client, memory, user_text = _prepare(agent=agent, request=request)
    try:
        stream = client.chat.completions.create(
            model=request.model,
            messages=_upstream_messages(request=request, memory=memory),
            stream=True,
            extra_body=request.passthrough,
        )
    except openai.OpenAIError as error:
        raise _upstream_error(error) from error
    return _stream_relay(agent=agent, request=request, stream=stream, memory=memory, user_text=user_text)


def _stream_relay(
    *,
    agent: Agent,
    request: ChatRequest,
    stream: openai.Stream[ChatCompletionChunk],
    memory: InjectedMemory,
    user_text: str,
) -> Iterator[bytes]:
    reply: list[str] = []
    last: dict[str, Any] = {"id": "", "created": 0, "model": request.model}
    try:
        for chunk in stream:
            last = {"id": chunk.id, "created": chunk.created, "model": chunk.model or request.model}
            for choice in chunk.choices:
                if choice.index == 0 and choice.delta and choice.delta.content:
                    reply.append(choice.delta.content)
            yield _sse(chunk.to_json(indent=None))
    except openai.OpenAIError as error:
        logger.warning("chat proxy: upstream stream failed: %s", error)
        failure = _upstream_error(error)
        yield _sse(error_body(code=failure.code, message=failure.message))
        return
    finally:
        stream.close()
    memory.used["stored_message_ids"] = _turns_store(
        agent=agent,
        options=request.memory,
        user_text=user_text,
        reply_text="".join(reply),
        model=last["model"],
        completion_id=last["id"],
    )
    yield _sse({**last, "object": "chat.completion.chunk", "choices": [], "memory": memory.used})
    yield _sse("[DONE]")
