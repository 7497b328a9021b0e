"""A small, typed client over the standard library's urllib: no dependencies to pin next to an agent's own."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from datetime import date
from typing import Any, cast

from memory_client import _protocol as api
from memory_client._protocol import Call, MemoryAPIError, RetryPolicy
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

__all__ = ["MemoryAPIError", "MemoryClient"]


class MemoryClient:
    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 30.0,
        max_retries: int = 2,
        max_retry_wait: float = 30.0,
    ) -> None:
        """`max_retries`, `max_retry_wait`: a throttled request (429 with Retry-After) is sent again, at most
        max_retries times, when the wait it asks for is at most max_retry_wait seconds; otherwise MemoryAPIError
        is raised at once, with `retry_after` set."""
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.retry_policy = RetryPolicy(max_retries=max_retries, max_wait=max_retry_wait)
        self._last = threading.local()

    @property
    def server_timing(self) -> dict[str, float]:
        """Where the service spent the last response's time (this thread's last request), in milliseconds per stage,
        from its Server-Timing header: e.g. embed, text_sql, vector_sql, fuse, hits_sql, serialize, and app (all of
        it). What the caller measured beyond `app` is the network and HTTP."""
        return dict(getattr(self._last, "server_timing", {}))

    # --- memory reads ---------------------------------------------------------------------------------------------

    def context(
        self, *, user: str | None = None, session: str | None = None, if_none_match: str | None = None
    ) -> MemoryContext | None:
        """The always-in-context block. With `if_none_match` (a previous result's etag), None when unchanged."""
        return cast(
            MemoryContext | None, self._call(api.context(user=user, session=session, if_none_match=if_none_match))
        )

    def bundle(
        self,
        *,
        query: str,
        user: str | None = None,
        session: str | None = None,
        token_budget: int = 2000,
        **options: Any,
    ) -> MemoryBundle:
        """Everything memory offers for one prompt, cut to `token_budget`. `options`: facts_top_k,
        similar_messages_top_k, recent_turns, min_similarity, recency_weight, part_token_limits (see docs/api.md)."""
        call = api.bundle(query=query, user=user, session=session, token_budget=token_budget, options=options)
        return cast(MemoryBundle, self._call(call))

    def search(
        self,
        *,
        query: str,
        user: str | None = None,
        top_k: int = 10,
        holds_at: str | date | None = None,
        **options: Any,
    ) -> SearchResults:
        """Hybrid fact search. `holds_at` (a date, a date-time or their ISO text): only what held in the world then,
        what certainly held first. `options`: mode, min_similarity, recency_weight, mmr_lambda, scopes, tags, as_of
        (ISO 8601: what memory held then), include_history, fallback_to_recent, time_from, time_to (ISO dates),
        time_filter (see docs/api.md). Each hit's fact carries its `world_time`."""
        call = api.search(query=query, user=user, top_k=top_k, options=options | {"holds_at": holds_at})
        return cast(SearchResults, self._call(call))

    def messages_search(
        self, *, query: str, user: str | None = None, session: str | None = None, top_k: int = 10, **options: Any
    ) -> MessageSearchResults:
        """The user's past messages (one session's when given) that best answer `query`. `options`: mode,
        min_similarity, time_from, time_to (ISO dates), time_filter (see docs/api.md)."""
        call = api.messages_search(query=query, user=user, session=session, top_k=top_k, options=options)
        return cast(MessageSearchResults, self._call(call))

    # --- facts ----------------------------------------------------------------------------------------------------

    def facts_list(
        self,
        *,
        user: str | None = None,
        scope: str | None = None,
        tag: str | None = None,
        status: str = "current",
        page_size: int = 50,
    ) -> Iterator[Fact]:
        """Every matching fact, newest first, following the cursor pages."""
        call = api.facts_list(user=user, scope=scope, tag=tag, status=status, page_size=page_size)
        return cast(Iterator[Fact], self._paginate(call))

    def fact_create(
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
        """Store a fact (embedded at once); the same content in the same scope returns the stored one. `world_time`:
        when its statement held in the world, if known ({"start": "2023-05", "end": None})."""
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
        return cast(Fact, self._call(call))

    def fact_get(self, fact_id: int) -> Fact:
        return cast(Fact, self._call(api.fact_get(fact_id)))

    def fact_update(
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
        """Write a new version of the fact (the old one stays in its history). Returns the new version. `world_time`
        says when the statement held: an end given is a change in the world, recorded as this new version."""
        changes = {"content": content, "scopes": scopes, "tags": tags, "metadata": metadata, "user": user}
        changes |= {"reason": reason, "world_time": world_time, "expires_at": expires_at, "expires_in": expires_in}
        return cast(Fact, self._call(api.fact_update(fact_id, changes=changes, never_expires=never_expires)))

    def fact_delete(self, fact_id: int, *, hard: bool = False, reason: str | None = None) -> None:
        """Close the fact (kept as history), or with hard=True erase its whole lineage."""
        self._call(api.fact_delete(fact_id, hard=hard, reason=reason))

    def fact_feedback(
        self, fact_id: int, *, rating: str, note: str | None = None, user: str | None = None
    ) -> FactFeedback:
        """How a fact served: useful, wrong, outdated or harmful, the agent's or on behalf of `user`. A user's wrong or
        outdated on their own fact closes it; on shared or curated memory it waits for an operator's review."""
        return cast(FactFeedback, self._call(api.fact_feedback(fact_id, rating=rating, note=note, user=user)))

    def fact_history(self, fact_id: int) -> FactHistory:
        """Every version of the fact's lineage, oldest first, with the reason for each change."""
        return cast(FactHistory, self._call(api.fact_history(fact_id)))

    # --- what changed, and the entity graph ------------------------------------------------------------------------

    def user_timeline(
        self,
        user: str,
        *,
        time_from: str | date | None = None,
        time_to: str | date | None = None,
        page_size: int = 50,
    ) -> Iterator[TimelineEntry]:
        """What changed about the end user, in the order it happened in the world (a statement by its start, an
        ending by its end, one without a time in the world by when it was recorded), following the pages.
        `time_from`/`time_to`: the entries placed in those days. A user the agent has never seen: MemoryAPIError 404."""
        call = api.user_timeline(user, time_from=time_from, time_to=time_to, page_size=page_size)
        return cast(Iterator[TimelineEntry], self._paginate(call))

    def entity_timeline(
        self,
        entity_id: int,
        *,
        time_from: str | date | None = None,
        time_to: str | date | None = None,
        page_size: int = 50,
    ) -> Iterator[TimelineEntry]:
        """What changed about one entity (the versions of the facts that stated its relations), as user_timeline."""
        call = api.entity_timeline(entity_id, time_from=time_from, time_to=time_to, page_size=page_size)
        return cast(Iterator[TimelineEntry], self._paginate(call))

    def entities_list(self, *, user: str | None = None, q: str | None = None, page_size: int = 50) -> Iterator[Entity]:
        """The user's entities (the agent-wide ones without `user`), newest first; `q`: a part of any of its names."""
        return cast(Iterator[Entity], self._paginate(api.entities_list(user=user, q=q, page_size=page_size)))

    def entity_get(self, entity_id: int) -> EntityDetail:
        """One entity with its relations (current and ended, each with its world time) and the facts stating them."""
        return cast(EntityDetail, self._call(api.entity_get(entity_id)))

    # --- tools ----------------------------------------------------------------------------------------------------

    def tools(self) -> list[dict[str, Any]]:
        """OpenAI-format tool definitions, to pass as `tools` to a chat completion."""
        return cast(list[dict[str, Any]], self._call(api.tools()))

    def tool_call(
        self,
        *,
        name: str,
        arguments: dict[str, Any] | str,
        user: str | None = None,
        session: str | None = None,
    ) -> ToolCallResult:
        """Execute a tool call as the model made it (`arguments` may be its JSON string). A mistake of the model
        is not an exception: the result has ok=False and an `error` to send back as the tool message."""
        return cast(
            ToolCallResult, self._call(api.tool_call(name=name, arguments=arguments, user=user, session=session))
        )

    def mcp_tools(self, *, user: str | None = None, session: str | None = None) -> list[dict[str, Any]]:
        """The MCP server's tools as MCP `Tool` objects (what /mcp lists). With `user` or `session`, the tools are
        pinned to them and do not take those arguments."""
        return cast(list[dict[str, Any]], self._call(api.mcp_tools(user=user, session=session)))

    def mcp_tool_call(
        self, *, name: str, arguments: dict[str, Any], user: str | None = None, session: str | None = None
    ) -> MCPToolCallResult:
        """Run one of the MCP server's tools. A mistake of the model is not an exception: ok=False, an `error` naming
        the argument, and `fields`."""
        return cast(
            MCPToolCallResult,
            self._call(api.mcp_tool_call(name=name, arguments=arguments, user=user, session=session)),
        )

    # --- ingestion ------------------------------------------------------------------------------------------------

    def session_create(self, *, user: str, session: str) -> SessionInfo:
        """Create the session for the user, or fetch it if it exists."""
        return cast(SessionInfo, self._call(api.session_create(user=user, session=session)))

    def session_get(self, session: str) -> SessionInfo:
        return cast(SessionInfo, self._call(api.session_get(session)))

    def messages_append(self, session: str, messages: list[MessageIn], *, user: str | None = None) -> AppendResult:
        """Store messages (the session is created for `user` on first use). Messages with an idempotency_key the
        session already holds come back as stored, not stored twice: retrying is safe."""
        return cast(AppendResult, self._call(api.messages_append(session, messages=messages, user=user)))

    def messages_list(self, session: str, *, page_size: int = 100) -> Iterator[StoredMessage]:
        """Every message of the session, oldest first, following the cursor pages."""
        return cast(Iterator[StoredMessage], self._paginate(api.messages_list(session, page_size=page_size)))

    def session_close(self, session: str) -> SessionInfo:
        """Mark the session closed; formation of what is not formed yet is queued. Closing a closed session changes
        nothing and returns it as it is."""
        return cast(SessionInfo, self._call(api.session_close(session)))

    def session_delete(self, session: str) -> SessionDeleted:
        """Delete the session: its messages, session-scope memory and jobs. What was learnt from it (facts, user and
        agent reflections) stays; erase the user to remove that too."""
        return cast(SessionDeleted, self._call(api.session_delete(session)))

    # --- users ----------------------------------------------------------------------------------------------------

    def users_list(
        self, *, active_after: str | None = None, active_before: str | None = None, page_size: int = 50
    ) -> Iterator[EndUserInfo]:
        """The agent's end users, newest first, with their last activity (ISO times filter it), following the pages."""
        call = api.users_list(active_after=active_after, active_before=active_before, page_size=page_size)
        return cast(Iterator[EndUserInfo], self._paginate(call))

    def user_get(self, user: str) -> UserDetail:
        """One end user: what is kept about them, counted by kind, and their last activity."""
        return cast(UserDetail, self._call(api.user_get(user)))

    def profile(
        self, user: str | None, *, categories: Sequence[str] | None = None, include_history: bool = False
    ) -> Profile:
        """What memory holds of the end user by category (one entry per value, with its source facts, world time
        and last mention), and their keyed attributes; `user` None: the agent-wide profile. `categories`: only those
        (an unknown one: MemoryAPIError 400 naming `category`); `include_history`: also the entries that ended, under
        each category's `history`. A user the agent has never seen: MemoryAPIError 404."""
        return cast(Profile, self._call(api.profile(user=user, categories=categories, include_history=include_history)))

    def user_export(self, user: str) -> list[dict[str, Any]]:
        """The user's native export (the lines `import_memories --format native` reads back), as a list of rows."""
        return cast(list[dict[str, Any]], self._call(api.user_export(user)))

    def user_erase(self, user: str) -> UserErasure:
        """Erase the user: every row kept about them; an erasure record stays. Repeating it is safe
        (`already_erased`)."""
        return cast(UserErasure, self._call(api.user_erase(user)))

    def session_form(self, session: str) -> FormationQueued:
        """Queue memory formation of the session now."""
        return cast(FormationQueued, self._call(api.session_form(session)))

    # --- plumbing -------------------------------------------------------------------------------------------------

    def _paginate(self, call: Call) -> Iterator[Any]:
        page: Call | None = call
        while page is not None:
            body = self._call(page)
            yield from body["results"]
            page = api.next_page(body)

    def _call(self, call: Call) -> Any:
        attempt = 0
        while True:
            try:
                return self._send(call)
            except MemoryAPIError as error:
                delay = self.retry_policy.delay(error, attempt=attempt)
                if delay is None:
                    raise
                time.sleep(delay)
                attempt += 1

    def _send(self, call: Call) -> Any:
        request = urllib.request.Request(call.url(self.base_url), data=call.body(), method=call.method)
        for name, value in call.request_headers(self.api_key).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                status, headers, raw = response.status, response.headers, response.read()
                self._last.server_timing = api.server_timing(headers.get("Server-Timing", ""))
        except urllib.error.HTTPError as error:  # an error status: read outside, so its traceback is not chained
            status, headers, raw = error.code, error.headers, error.read()
        return api.response_result(call, status=status, headers=headers, raw=raw)
