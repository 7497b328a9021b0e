"""A small, typed client over the standard library's urllib: no dependencies to pin next to an agent's own."""

from __future__ import annotations

import contextlib
import json
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any, cast

from memory_client.types import (
    AppendResult,
    Fact,
    FactHistory,
    FormationQueued,
    MCPToolCallResult,
    MemoryBundle,
    MemoryContext,
    MessageIn,
    MessageSearchResults,
    SearchResults,
    SessionInfo,
    StoredMessage,
    ToolCallResult,
)


class MemoryAPIError(Exception):
    """An error response of the service, in its one error shape: {"error": {"code", "message", "fields"}}."""

    def __init__(self, *, status: int, code: str, message: str, fields: dict[str, list[str]] | None = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.fields = fields or {}


class MemoryClient:
    def __init__(self, base_url: str, api_key: str, *, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
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
        headers = {"If-None-Match": if_none_match} if if_none_match else {}
        status, body = self._request(
            "GET", "/api/v1/memory/context", query={"user": user, "session": session}, headers=headers
        )
        return None if status == 304 else cast(MemoryContext, body)

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
        payload = {"query": query, "user": user, "session": session, "token_budget": token_budget, **options}
        return cast(MemoryBundle, self._post("/api/v1/memory/bundle", payload))

    def search(self, *, query: str, user: str | None = None, top_k: int = 10, **options: Any) -> SearchResults:
        """Hybrid fact search. `options`: mode, min_similarity, recency_weight, mmr_lambda, scopes, tags, as_of (ISO
        8601), include_history, fallback_to_recent, time_from, time_to (ISO dates), time_filter (see docs/api.md)."""
        payload = {"query": query, "user": user, "top_k": top_k, **options}
        return cast(SearchResults, self._post("/api/v1/memory/search", payload))

    def messages_search(
        self, *, query: str, user: str | None = None, session: str | None = None, top_k: int = 10, **options: Any
    ) -> MessageSearchResults:
        """The user's past messages (one session's when given) that best answer `query`. `options`: mode,
        min_similarity, time_from, time_to (ISO dates), time_filter (see docs/api.md)."""
        payload = {"query": query, "user": user, "session": session, "top_k": top_k, **options}
        return cast(MessageSearchResults, self._post("/api/v1/messages/search", payload))

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
        query = {"user": user, "scope": scope, "tag": tag, "status": status, "page_size": page_size}
        return cast(Iterator[Fact], self._paginate("/api/v1/facts", query=query))

    def fact_create(
        self,
        *,
        content: str,
        user: str | None = None,
        scopes: list[str] | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Fact:
        """Store a fact (embedded at once); the same content in the same scope returns the stored one."""
        payload = {"content": content, "user": user, "scopes": scopes, "tags": tags, "metadata": metadata}
        return cast(Fact, self._post("/api/v1/facts", payload))

    def fact_get(self, fact_id: int) -> Fact:
        return cast(Fact, self._request("GET", f"/api/v1/facts/{int(fact_id)}")[1])

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
    ) -> Fact:
        """Write a new version of the fact (the old one stays in its history). Returns the new version."""
        payload = {
            "content": content,
            "scopes": scopes,
            "tags": tags,
            "metadata": metadata,
            "user": user,
            "reason": reason,
        }
        body = {key: value for key, value in payload.items() if value is not None}
        return cast(Fact, self._request("PATCH", f"/api/v1/facts/{int(fact_id)}", json_body=body)[1])

    def fact_delete(self, fact_id: int, *, hard: bool = False, reason: str | None = None) -> None:
        """Close the fact (kept as history), or with hard=True erase its whole lineage."""
        query = {"hard": "true" if hard else None, "reason": reason}
        self._request("DELETE", f"/api/v1/facts/{int(fact_id)}", query=query)

    def fact_history(self, fact_id: int) -> FactHistory:
        """Every version of the fact's lineage, oldest first, with the reason for each change."""
        return cast(FactHistory, self._request("GET", f"/api/v1/facts/{int(fact_id)}/history")[1])

    # --- tools ----------------------------------------------------------------------------------------------------

    def tools(self) -> list[dict[str, Any]]:
        """OpenAI-format tool definitions, to pass as `tools` to a chat completion."""
        return cast(list[dict[str, Any]], self._request("GET", "/api/v1/tools")[1]["tools"])

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
        payload = {"name": name, "arguments": arguments, "user": user, "session": session}
        return cast(ToolCallResult, self._post("/api/v1/tools/call", payload))

    def mcp_tools(self, *, user: str | None = None, session: str | None = None) -> list[dict[str, Any]]:
        """The MCP server's tools as MCP `Tool` objects (what /mcp lists). With `user` or `session`, the tools are
        pinned to them and do not take those arguments."""
        return cast(
            list[dict[str, Any]], self._request("GET", "/api/v1/mcp/tools", headers=_pinned(user, session))[1]["tools"]
        )

    def mcp_tool_call(
        self, *, name: str, arguments: dict[str, Any], user: str | None = None, session: str | None = None
    ) -> MCPToolCallResult:
        """Run one of the MCP server's tools. A mistake of the model is not an exception: ok=False, an `error` naming
        the argument, and `fields`."""
        _, body = self._request(
            "POST",
            "/api/v1/mcp/tools/call",
            json_body={"name": name, "arguments": arguments},
            headers=_pinned(user, session),
        )
        return cast(MCPToolCallResult, body)

    # --- ingestion ------------------------------------------------------------------------------------------------

    def session_create(self, *, user: str, session: str) -> SessionInfo:
        """Create the session for the user, or fetch it if it exists."""
        return cast(SessionInfo, self._post("/api/v1/sessions", {"user": user, "session": session}))

    def session_get(self, session: str) -> SessionInfo:
        return cast(SessionInfo, self._request("GET", _session_path(session))[1])

    def messages_append(self, session: str, messages: list[MessageIn], *, user: str | None = None) -> AppendResult:
        """Store messages (the session is created for `user` on first use). Messages with an idempotency_key the
        session already holds come back as stored, not stored twice: retrying is safe."""
        return cast(
            AppendResult, self._post(_session_path(session) + "/messages", {"user": user, "messages": messages})
        )

    def messages_list(self, session: str, *, page_size: int = 100) -> Iterator[StoredMessage]:
        """Every message of the session, oldest first, following the cursor pages."""
        return cast(
            Iterator[StoredMessage],
            self._paginate(_session_path(session) + "/messages", query={"page_size": page_size}),
        )

    def session_close(self, session: str) -> SessionInfo:
        """Mark the session closed; formation of what is not formed yet is queued. Closing a closed session changes
        nothing and returns it as it is."""
        return cast(SessionInfo, self._post(_session_path(session) + "/close", {}))

    def session_form(self, session: str) -> FormationQueued:
        """Queue memory formation of the session now."""
        return cast(FormationQueued, self._post(_session_path(session) + "/form", {}))

    # --- plumbing -------------------------------------------------------------------------------------------------

    def _paginate(self, path: str, *, query: dict[str, Any]) -> Iterator[Any]:
        _, page = self._request("GET", path, query=query)
        while True:
            yield from page["results"]
            if not page.get("next"):
                return
            _, page = self._request("GET", page["next"])

    def _post(self, path: str, payload: dict[str, Any]) -> Any:
        _, body = self._request("POST", path, json_body={k: v for k, v in payload.items() if v is not None})
        return body

    def _request(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, Any] | None = None,
        json_body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        url = path if path.startswith(("http://", "https://")) else self.base_url + path
        present = {key: value for key, value in (query or {}).items() if value is not None}
        if present:
            url += "?" + urllib.parse.urlencode(present, doseq=True)
        data = json.dumps(json_body).encode() if json_body is not None else None
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.api_key}")
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
                self._last.server_timing = _server_timing(response.headers.get("Server-Timing", ""))
                return response.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as error:
            if error.code == 304:
                return 304, None
            raise _api_error(error) from None


def _pinned(user: str | None, session: str | None) -> dict[str, str]:
    """The headers that pin an MCP call to an end user and session."""
    pinned = {"X-Memory-User": user, "X-Memory-Session": session}
    return {name: value for name, value in pinned.items() if value is not None}


def _server_timing(header: str) -> dict[str, float]:
    stages = {}
    for part in header.split(","):
        name, _, parameters = part.strip().partition(";")
        for parameter in parameters.split(";"):
            key, _, value = parameter.strip().partition("=")
            if key == "dur" and name:
                with contextlib.suppress(ValueError):
                    stages[name] = float(value)
    return stages


def _session_path(session: str) -> str:
    return "/api/v1/sessions/" + urllib.parse.quote(session, safe="")


def _api_error(error: urllib.error.HTTPError) -> MemoryAPIError:
    raw = error.read()
    try:
        body = json.loads(raw)["error"]
        return MemoryAPIError(status=error.code, code=body["code"], message=body["message"], fields=body.get("fields"))
    except (ValueError, KeyError, TypeError):
        return MemoryAPIError(status=error.code, code="http_error", message=raw.decode(errors="replace")[:500])
