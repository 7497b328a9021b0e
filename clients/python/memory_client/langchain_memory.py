"""LangChain adapters (`pip install agent-memory-client[langchain]`), sync and async:

- AgentMemoryChatMessageHistory, a BaseChatMessageHistory that posts a conversation's turns to the service's
  ingestion API, so that memory forms from them (facts, reflections), and reads the session's transcript back;
- AgentMemoryRetriever, a BaseRetriever over the service's fact search: one Document per fact, with its id, scopes,
  score and ranks in the metadata.

docs/integrations.md ("LangChain") has a worked example of each."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, PrivateAttr

from memory_client._bridge import Clients, Steps, Use
from memory_client.client import MemoryAPIError, MemoryClient
from memory_client.types import FactHit, MessageIn, StoredMessage

if TYPE_CHECKING:
    from memory_client.async_client import AsyncMemoryClient

__all__ = ["AgentMemoryChatMessageHistory", "AgentMemoryRetriever"]

# LangChain's message types and the service's roles ("other": a role the service has no name for).
_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
_MESSAGES: dict[str, type[BaseMessage]] = {"user": HumanMessage, "assistant": AIMessage, "system": SystemMessage}


def _text(message: BaseMessage) -> str:
    """The message's text: a multimodal message's text parts, joined."""
    if isinstance(message.content, str):
        return message.content
    parts = [part if isinstance(part, str) else part.get("text", "") for part in message.content]
    return "\n".join(part for part in parts if part)


def message_in(message: BaseMessage) -> MessageIn:
    """A LangChain message as the service stores it. A message's id becomes its idempotency key, so posting the
    same message again (a retried run) stores it once."""
    text = _text(message)
    metadata: dict[str, Any] = {}
    if isinstance(message, AIMessage) and message.tool_calls:
        calls = [{"name": call["name"], "args": call["args"], "id": call.get("id")} for call in message.tool_calls]
        metadata["tool_calls"] = calls
        if not text.strip():  # the service stores no empty turn: the calls, as text, are what the model said
            text = "; ".join(f"called {call['name']}({json.dumps(call['args'], sort_keys=True)})" for call in calls)
            metadata["text_is_tool_calls"] = True
    turn: MessageIn = {"role": _ROLES.get(message.type, "other"), "content": text}  # type: ignore[typeddict-item]
    if message.name:
        metadata["speaker"] = message.name
    if isinstance(message, ToolMessage):
        metadata["tool_call_id"] = message.tool_call_id
    if isinstance(message, ChatMessage):
        metadata["chat_role"] = message.role
    if metadata:
        turn["metadata"] = metadata
    if message.id:
        turn["idempotency_key"] = str(message.id)[:200]
    return turn


def message_out(stored: StoredMessage) -> BaseMessage:
    metadata = stored.get("metadata") or {}
    speaker = metadata.get("speaker")
    kwargs: dict[str, Any] = {"content": stored["content"], "id": stored.get("idempotency_key") or str(stored["id"])}
    if speaker:
        kwargs["name"] = speaker
    if stored["role"] == "assistant" and metadata.get("tool_calls"):
        content = "" if metadata.get("text_is_tool_calls") else stored["content"]
        return AIMessage(**{**kwargs, "content": content}, tool_calls=metadata["tool_calls"])
    if stored["role"] == "tool":
        return ToolMessage(tool_call_id=str(metadata.get("tool_call_id", "")), **kwargs)
    if stored["role"] in _MESSAGES:
        return _MESSAGES[stored["role"]](**kwargs)
    return ChatMessage(role=str(metadata.get("chat_role") or stored["role"]), **kwargs)


class AgentMemoryChatMessageHistory(BaseChatMessageHistory):
    """The chat history of one session of one end user, kept by the service: `add_messages` posts the turns (memory
    forms from them in the background), `messages` reads the session's transcript, oldest first.

    `clear()` is not supported: the service keeps transcripts as the record memory was formed from (a user's data
    is erased with the erase_user command, docs/security.md). Use a new session id to start afresh."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        user: str,
        session: str,
        client: MemoryClient | None = None,
        async_client: AsyncMemoryClient | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.clients = Clients(
            base_url=base_url, api_key=api_key, client=client, async_client=async_client, timeout=timeout
        )
        self.user = user
        self.session = session

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        return self.clients.run(self._read())

    async def aget_messages(self) -> list[BaseMessage]:
        return await self.clients.arun(self._read())

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        self.clients.run(self._append(messages))

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        await self.clients.arun(self._append(messages))

    def clear(self) -> None:
        raise NotImplementedError(
            "the memory service keeps a session's transcript (memory is formed from it): start a new session id "
            "instead, or erase the user's data with the erase_user command"
        )

    async def aclear(self) -> None:
        self.clear()

    async def aclose(self) -> None:
        """Close the async clients this history made (one per event loop it ran in)."""
        await self.clients.aclose()

    def _read(self) -> Steps[list[BaseMessage]]:
        try:
            stored = yield Use("messages_list", {"session": self.session, "page_size": 200}, take=1_000_000)
        except MemoryAPIError as error:
            if error.status == 404:  # nothing posted yet: the session does not exist
                return []
            raise
        return [message_out(message) for message in stored]

    def _append(self, messages: Sequence[BaseMessage]) -> Steps[None]:
        if messages:
            turns = [message_in(message) for message in messages]
            yield Use("messages_append", {"session": self.session, "messages": turns, "user": self.user})


def document(hit: FactHit) -> Document:
    fact = hit["fact"]
    metadata = {
        "id": fact["id"],
        "scopes": fact["scopes"],
        "scope": "user" if "user" in fact["scopes"] else "agent",
        "user": fact["user"],
        "tags": fact["tags"],
        "score": hit["score"],
        "similarity": hit["similarity"],
        "vector_rank": hit["vector_rank"],
        "text_rank": hit["text_rank"],
        "time_rank": hit.get("time_rank"),
        "graph_rank": hit.get("graph_rank"),
        "lineage": fact["lineage"],
        "version": fact["version"],
        "valid_from": fact["valid_from"],
        "world_time": fact.get("world_time"),
    }
    return Document(page_content=fact["content"], metadata=metadata, id=str(fact["id"]))


class AgentMemoryRetriever(BaseRetriever):
    """Facts that answer a query: the end user's and the agent-wide ones (the service's hybrid search). `options`
    are the search's (mode, min_similarity, recency_weight, mmr_lambda, scopes, tags, holds_at, ...: docs/api.md).
    Each document's metadata says when its fact held in the world (`world_time`, with `holds_now`)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    base_url: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    user: str | None = None
    top_k: int = 5
    options: dict[str, Any] = Field(default_factory=dict)
    client: MemoryClient | None = Field(default=None, exclude=True)
    async_client: Any = Field(default=None, exclude=True)
    timeout: float = 30.0
    _clients: Clients = PrivateAttr()

    def model_post_init(self, context: Any) -> None:
        self._clients = Clients(
            base_url=self.base_url,
            api_key=self.api_key,
            client=self.client,
            async_client=self.async_client,
            timeout=self.timeout,
        )

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return self._clients.run(self._search(query))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        return await self._clients.arun(self._search(query))

    async def aclose(self) -> None:
        """Close the async clients this retriever made (one per event loop it ran in)."""
        await self._clients.aclose()

    def _search(self, query: str) -> Steps[list[Document]]:
        found = yield Use("search", {"query": query, "user": self.user, "top_k": self.top_k, **self.options})
        return [document(hit) for hit in found["results"]]
