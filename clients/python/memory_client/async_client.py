"""The async client, on httpx (`pip install agent-memory-client[async]`): MemoryClient's methods, arguments and
result types, awaited. Requests, errors, Retry-After and Server-Timing are memory_client._protocol's, shared with
the sync client; only the transport differs."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator, Sequence
from datetime import date
from types import TracebackType
from typing import Any, TypeVar, cast

import httpx

from memory_client import _protocol as api
from memory_client._protocol import Call, MemoryAPIError, RetryPolicy
from memory_client.client import MemoryClient
from memory_client.types import (
    AppendResult,
    EndUserInfo,
    Entity,
    EntityDetail,
    Fact,
    FactFeedback,
    FactHistory,
    FormationQueued,
    MCPToolCallResult,
    MemoryBundle,
    MemoryContext,
    MessageIn,
    MessageSearchResults,
    Profile,
    SearchResults,
    SessionDeleted,
    SessionInfo,
    StoredMessage,
    TimelineEntry,
    ToolCallResult,
    UserDetail,
    UserErasure,
    WorldTimeIn,
)

__all__ = ["AsyncMemoryClient", "MemoryAPIError"]

_Class = TypeVar("_Class", bound=type)


def _documented_as(reference: type) -> Any:
    """Each method without a docstring of its own gets the reference class's method's: one text for both clients."""

    def decorate(cls: _Class) -> _Class:
        for name, member in vars(cls).items():
            original = getattr(reference, name, None)
            if callable(member) and member.__doc__ is None and original is not None:
                member.__doc__ = original.__doc__
        return cls

    return decorate


@_documented_as(MemoryClient)
class AsyncMemoryClient:
    """`async with AsyncMemoryClient(url, key) as memory: hits = await memory.search(query=..., user=...)`.

    One connection pool per client: create it once and share it, and close it (`async with`, or `await aclose()`).
    Pass `http_client` to use an httpx.AsyncClient of your own (proxies, transports); it is then yours to close."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 30.0,
        max_retries: int = 2,
        max_retry_wait: float = 30.0,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.retry_policy = RetryPolicy(max_retries=max_retries, max_wait=max_retry_wait)
        self._owns_http = http_client is None
        self._http = http_client or httpx.AsyncClient(timeout=timeout)
        # Per task, like the sync client's per thread: awaiting a method runs it in the caller's context.
        self._last_timing: contextvars.ContextVar[dict[str, float]] = contextvars.ContextVar("server_timing")

    async def __aenter__(self) -> AsyncMemoryClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    @property
    def server_timing(self) -> dict[str, float]:
        """Where the service spent the last response's time (this task's last request), in milliseconds per stage,
        from its Server-Timing header (see MemoryClient.server_timing)."""
        return dict(self._last_timing.get({}))

    # --- memory reads ---------------------------------------------------------------------------------------------

    async def context(
        self, *, user: str | None = None, session: str | None = None, if_none_match: str | None = None
    ) -> MemoryContext | None:
        call = api.context(user=user, session=session, if_none_match=if_none_match)
        return cast(MemoryContext | None, await self._call(call))

    async def bundle(
        self,
        *,
        query: str,
        user: str | None = None,
        session: str | None = None,
        token_budget: int = 2000,
        **options: Any,
    ) -> MemoryBundle:
        call = api.bundle(query=query, user=user, session=session, token_budget=token_budget, options=options)
        return cast(MemoryBundle, await self._call(call))

    async def search(
        self,
        *,
        query: str,
        user: str | None = None,
        top_k: int = 10,
        holds_at: str | date | None = None,
        **options: Any,
    ) -> SearchResults:
        call = api.search(query=query, user=user, top_k=top_k, options=options | {"holds_at": holds_at})
        return cast(SearchResults, await self._call(call))

    async def messages_search(
        self, *, query: str, user: str | None = None, session: str | None = None, top_k: int = 10, **options: Any
    ) -> MessageSearchResults:
        call = api.messages_search(query=query, user=user, session=session, top_k=top_k, options=options)
        return cast(MessageSearchResults, await self._call(call))

    # --- facts ----------------------------------------------------------------------------------------------------

    def facts_list(
        self,
        *,
        user: str | None = None,
        scope: str | None = None,
        tag: str | None = None,
        status: str = "current",
        page_size: int = 50,
    ) -> AsyncIterator[Fact]:
        """Every matching fact, newest first, following the cursor pages: `async for fact in memory.facts_list()`."""
        call = api.facts_list(user=user, scope=scope, tag=tag, status=status, page_size=page_size)
        return cast(AsyncIterator[Fact], self._paginate(call))

    async def fact_create(
        self,
        *,
        content: str,
        user: str | None = None,
        scopes: list[str] | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        world_time: WorldTimeIn | None = None,
        expires_at: str | None = None,
        expires_in: str | None = None,
    ) -> Fact:
        call = api.fact_create(
            content=content,
            user=user,
            scopes=scopes,
            tags=tags,
            metadata=metadata,
            world_time=world_time,
            expires_at=expires_at,
            expires_in=expires_in,
        )
        return cast(Fact, await self._call(call))

    async def fact_get(self, fact_id: int) -> Fact:
        return cast(Fact, await self._call(api.fact_get(fact_id)))

    async def fact_update(
        self,
        fact_id: int,
        *,
        content: str | None = None,
        scopes: list[str] | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        user: str | None = None,
        reason: str | None = None,
        world_time: WorldTimeIn | None = None,
        expires_at: str | None = None,
        expires_in: str | None = None,
        never_expires: bool = False,
    ) -> Fact:
        changes = {"content": content, "scopes": scopes, "tags": tags, "metadata": metadata, "user": user}
        changes |= {"reason": reason, "world_time": world_time, "expires_at": expires_at, "expires_in": expires_in}
        return cast(Fact, await self._call(api.fact_update(fact_id, changes=changes, never_expires=never_expires)))

    async def fact_delete(self, fact_id: int, *, hard: bool = False, reason: str | None = None) -> None:
        await self._call(api.fact_delete(fact_id, hard=hard, reason=reason))

    async def fact_feedback(
        self, fact_id: int, *, rating: str, note: str | None = None, user: str | None = None
    ) -> FactFeedback:
        """How a fact served: useful, wrong, outdated or harmful, the agent's or on behalf of `user`. A user's wrong or
        outdated on their own fact closes it; on shared or curated memory it waits for an operator's review."""
        return cast(FactFeedback, await self._call(api.fact_feedback(fact_id, rating=rating, note=note, user=user)))

    async def fact_history(self, fact_id: int) -> FactHistory:
        return cast(FactHistory, await self._call(api.fact_history(fact_id)))

    # --- what changed, and the entity graph ------------------------------------------------------------------------

    def user_timeline(
        self,
        user: str,
        *,
        time_from: str | date | None = None,
        time_to: str | date | None = None,
        page_size: int = 50,
    ) -> AsyncIterator[TimelineEntry]:
        """What changed about the end user, in world-time order, following the pages: `async for entry in ...`."""
        call = api.user_timeline(user, time_from=time_from, time_to=time_to, page_size=page_size)
        return cast(AsyncIterator[TimelineEntry], self._paginate(call))

    def entity_timeline(
        self,
        entity_id: int,
        *,
        time_from: str | date | None = None,
        time_to: str | date | None = None,
        page_size: int = 50,
    ) -> AsyncIterator[TimelineEntry]:
        """What changed about one entity, in world-time order, following the pages: `async for entry in ...`."""
        call = api.entity_timeline(entity_id, time_from=time_from, time_to=time_to, page_size=page_size)
        return cast(AsyncIterator[TimelineEntry], self._paginate(call))

    def entities_list(
        self, *, user: str | None = None, q: str | None = None, page_size: int = 50
    ) -> AsyncIterator[Entity]:
        """The user's entities (the agent-wide ones without `user`), newest first: `async for entity in ...`."""
        return cast(AsyncIterator[Entity], self._paginate(api.entities_list(user=user, q=q, page_size=page_size)))

    async def entity_get(self, entity_id: int) -> EntityDetail:
        return cast(EntityDetail, await self._call(api.entity_get(entity_id)))

    # --- tools ----------------------------------------------------------------------------------------------------

    async def tools(self) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], await self._call(api.tools()))

    async def tool_call(
        self, *, name: str, arguments: dict[str, Any] | str, user: str | None = None, session: str | None = None
    ) -> ToolCallResult:
        call = api.tool_call(name=name, arguments=arguments, user=user, session=session)
        return cast(ToolCallResult, await self._call(call))

    async def mcp_tools(self, *, user: str | None = None, session: str | None = None) -> list[dict[str, Any]]:
        """The MCP server's tools as MCP `Tool` objects (what /mcp lists); with `user` or `session` pinned to them."""
        return cast(list[dict[str, Any]], await self._call(api.mcp_tools(user=user, session=session)))

    async def mcp_tool_call(
        self, *, name: str, arguments: dict[str, Any], user: str | None = None, session: str | None = None
    ) -> MCPToolCallResult:
        """Run one of the MCP server's tools; a mistake of the model is ok=False with an `error`, not an exception."""
        call = api.mcp_tool_call(name=name, arguments=arguments, user=user, session=session)
        return cast(MCPToolCallResult, await self._call(call))

    # --- ingestion ------------------------------------------------------------------------------------------------

    async def session_create(self, *, user: str, session: str) -> SessionInfo:
        return cast(SessionInfo, await self._call(api.session_create(user=user, session=session)))

    async def session_get(self, session: str) -> SessionInfo:
        return cast(SessionInfo, await self._call(api.session_get(session)))

    async def messages_append(
        self, session: str, messages: list[MessageIn], *, user: str | None = None
    ) -> AppendResult:
        return cast(AppendResult, await self._call(api.messages_append(session, messages=messages, user=user)))

    def messages_list(self, session: str, *, page_size: int = 100) -> AsyncIterator[StoredMessage]:
        """Every message of the session, oldest first, following the cursor pages: `async for message in ...`."""
        return cast(AsyncIterator[StoredMessage], self._paginate(api.messages_list(session, page_size=page_size)))

    async def session_close(self, session: str) -> SessionInfo:
        return cast(SessionInfo, await self._call(api.session_close(session)))

    async def session_delete(self, session: str) -> SessionDeleted:
        return cast(SessionDeleted, await self._call(api.session_delete(session)))

    # --- users ----------------------------------------------------------------------------------------------------

    def users_list(
        self, *, active_after: str | None = None, active_before: str | None = None, page_size: int = 50
    ) -> AsyncIterator[EndUserInfo]:
        call = api.users_list(active_after=active_after, active_before=active_before, page_size=page_size)
        return cast(AsyncIterator[EndUserInfo], self._paginate(call))

    async def user_get(self, user: str) -> UserDetail:
        return cast(UserDetail, await self._call(api.user_get(user)))

    async def profile(
        self, user: str | None, *, categories: Sequence[str] | None = None, include_history: bool = False
    ) -> Profile:
        return cast(
            Profile, await self._call(api.profile(user=user, categories=categories, include_history=include_history))
        )

    async def user_export(self, user: str) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], await self._call(api.user_export(user)))

    async def user_erase(self, user: str) -> UserErasure:
        return cast(UserErasure, await self._call(api.user_erase(user)))

    async def session_form(self, session: str) -> FormationQueued:
        return cast(FormationQueued, await self._call(api.session_form(session)))

    # --- plumbing -------------------------------------------------------------------------------------------------

    async def _paginate(self, call: Call) -> AsyncIterator[Any]:
        page: Call | None = call
        while page is not None:
            body = await self._call(page)
            for item in body["results"]:
                yield item
            page = api.next_page(body)

    async def _call(self, call: Call) -> Any:
        attempt = 0
        while True:
            try:
                return await self._send(call)
            except MemoryAPIError as error:
                delay = self.retry_policy.delay(error, attempt=attempt)
                if delay is None:
                    raise
                await asyncio.sleep(delay)
                attempt += 1

    async def _send(self, call: Call) -> Any:
        response = await self._http.request(
            call.method,
            call.url(self.base_url),
            content=call.body(),
            headers=call.request_headers(self.api_key),
            timeout=self.timeout,
        )
        if response.status_code < 400:
            self._last_timing.set(api.server_timing(response.headers.get("Server-Timing", "")))
        return api.response_result(call, status=response.status_code, headers=response.headers, raw=response.content)
