"""What the sync and the async client share, free of any I/O: each endpoint's request (method, path, query, body),
the reading of a response (its error shape, Server-Timing), and when a throttled request is worth retrying. The
two clients only move bytes: urllib in MemoryClient, httpx in AsyncMemoryClient."""

from __future__ import annotations

import contextlib
import json
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

USER_AGENT = "agent-memory-client/0.1"


class MemoryAPIError(Exception):
    """An error response of the service, in its one error shape: {"error": {"code", "message", "fields"}}.
    `retry_after` is the wait in seconds a 429 (or 503) asked for, else None."""

    def __init__(
        self,
        *,
        status: int,
        code: str,
        message: str,
        fields: dict[str, list[str]] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.fields = fields or {}
        self.retry_after = retry_after


def _body_of(status: int, body: Any) -> Any:
    return body


@dataclass(frozen=True)
class Call:
    """One request to the API and how its (status, body) becomes the method's result."""

    method: str
    path: str
    query: dict[str, Any] = field(default_factory=dict)
    json_body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    result: Callable[[int, Any], Any] = _body_of
    json_lines: bool = False  # the body is JSON lines (an export), read as a list

    def url(self, base_url: str) -> str:
        url = self.path if self.path.startswith(("http://", "https://")) else base_url + self.path
        present = {key: value for key, value in self.query.items() if value is not None}
        return url + ("?" + urllib.parse.urlencode(present, doseq=True) if present else "")

    def request_headers(self, api_key: str) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {api_key}", "Accept": "application/json", "User-Agent": USER_AGENT}
        if self.json_body is not None:
            headers["Content-Type"] = "application/json"
        return headers | self.headers

    def body(self) -> bytes | None:
        return json.dumps(self.json_body).encode() if self.json_body is not None else None


@dataclass(frozen=True)
class RetryPolicy:
    """A throttled request (429, or 503 with Retry-After) is sent again up to `max_retries` times when the wait it
    asks for is at most `max_wait` seconds; a longer wait is the caller's decision, so the error is raised at once.
    Throttling refuses a request before it does anything, so resending one (a POST too) never does it twice."""

    max_retries: int = 2
    max_wait: float = 30.0

    def delay(self, error: MemoryAPIError, *, attempt: int) -> float | None:
        """Seconds to wait before resending after `error` on try number `attempt` (0 first), or None: raise it."""
        if error.status not in (429, 503) or error.retry_after is None or attempt >= self.max_retries:
            return None
        return error.retry_after if error.retry_after <= self.max_wait else None


def response_result(call: Call, *, status: int, headers: Mapping[str, str], raw: bytes) -> Any:
    """The method's result for a response, or MemoryAPIError for an error status (304 is 'unchanged', no error)."""
    if status >= 400:
        raise api_error(status=status, headers=headers, raw=raw)
    if call.json_lines:
        return call.result(status, [json.loads(line) for line in raw.splitlines() if line.strip()])
    return call.result(status, json.loads(raw) if raw and status != 304 else None)


def api_error(*, status: int, headers: Mapping[str, str], raw: bytes) -> MemoryAPIError:
    retry_after = retry_after_seconds(headers.get("Retry-After"))
    try:
        body = json.loads(raw)["error"]
        return MemoryAPIError(
            status=status,
            code=body["code"],
            message=body["message"],
            fields=body.get("fields"),
            retry_after=retry_after,
        )
    except (ValueError, KeyError, TypeError):
        message = raw.decode(errors="replace")[:500]
        return MemoryAPIError(status=status, code="http_error", message=message, retry_after=retry_after)


def retry_after_seconds(header: str | None) -> float | None:
    """Retry-After in seconds (the service sends whole seconds; an HTTP date is not something it sends)."""
    if not header:
        return None
    try:
        return max(0.0, float(header))
    except ValueError:
        return None


def server_timing(header: str) -> dict[str, float]:
    stages = {}
    for part in header.split(","):
        name, _, parameters = part.strip().partition(";")
        for parameter in parameters.split(";"):
            key, _, value = parameter.strip().partition("=")
            if key == "dur" and name:
                with contextlib.suppress(ValueError):
                    stages[name] = float(value)
    return stages


def next_page(page: dict[str, Any]) -> Call | None:
    """The call for the page after `page` of a cursor-paginated list, None after the last."""
    return Call("GET", page["next"]) if page.get("next") else None


# --- the endpoints ------------------------------------------------------------------------------------------------


def _present(payload: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in payload.items() if value is not None}


def _post(path: str, payload: dict[str, Any], result: Callable[[int, Any], Any] = _body_of) -> Call:
    return Call("POST", path, json_body=_present(payload), result=result)


def session_path(session: str) -> str:
    return "/api/v1/sessions/" + urllib.parse.quote(session, safe="")


def _fact_path(fact_id: int) -> str:
    return f"/api/v1/facts/{int(fact_id)}"


def context(*, user: str | None, session: str | None, if_none_match: str | None) -> Call:
    headers = {"If-None-Match": if_none_match} if if_none_match else {}
    return Call(
        "GET",
        "/api/v1/memory/context",
        query={"user": user, "session": session},
        headers=headers,
        result=lambda status, body: None if status == 304 else body,
    )


def bundle(*, query: str, user: str | None, session: str | None, token_budget: int, options: dict) -> Call:
    payload = {"query": query, "user": user, "session": session, "token_budget": token_budget, **options}
    return _post("/api/v1/memory/bundle", payload)


def _day(value: str | date | None) -> str | None:
    """A date (or a datetime) as the API reads it; a string as given."""
    return value.isoformat() if isinstance(value, date) else value


def search(*, query: str, user: str | None, top_k: int, options: dict) -> Call:
    options = {**options, "holds_at": _day(options.get("holds_at"))}
    return _post("/api/v1/memory/search", {"query": query, "user": user, "top_k": top_k, **options})


def messages_search(*, query: str, user: str | None, session: str | None, top_k: int, options: dict) -> Call:
    payload = {"query": query, "user": user, "session": session, "top_k": top_k, **options}
    return _post("/api/v1/messages/search", payload)


def facts_list(*, user: str | None, scope: str | None, tag: str | None, status: str, page_size: int) -> Call:
    query = {"user": user, "scope": scope, "tag": tag, "status": status, "page_size": page_size}
    return Call("GET", "/api/v1/facts", query=query)


def fact_create(
    *,
    content: str,
    user: str | None,
    scopes: list[str] | None,
    tags: list[str] | None,
    metadata: dict | None,
    world_time: Mapping[str, Any] | None = None,
    expires_at: str | None = None,
    expires_in: str | None = None,
) -> Call:
    payload = {
        "content": content,
        "user": user,
        "scopes": scopes,
        "tags": tags,
        "metadata": metadata,
        "world_time": world_time,
    }
    return _post("/api/v1/facts", payload | {"expires_at": expires_at, "expires_in": expires_in})


def fact_get(fact_id: int) -> Call:
    return Call("GET", _fact_path(fact_id))


def fact_update(fact_id: int, *, changes: dict[str, Any], never_expires: bool = False) -> Call:
    return Call(
        "PATCH", _fact_path(fact_id), json_body=_present(changes) | ({"expires_at": None} if never_expires else {})
    )


def fact_feedback(fact_id: int, *, rating: str, note: str | None, user: str | None) -> Call:
    return _post(_fact_path(fact_id) + "/feedback", {"rating": rating, "note": note, "user": user})


def fact_delete(fact_id: int, *, hard: bool, reason: str | None) -> Call:
    return Call("DELETE", _fact_path(fact_id), query={"hard": "true" if hard else None, "reason": reason})


def fact_history(fact_id: int) -> Call:
    return Call("GET", _fact_path(fact_id) + "/history")


def _timeline_query(*, time_from: str | date | None, time_to: str | date | None, page_size: int) -> dict[str, Any]:
    return {"time_from": _day(time_from), "time_to": _day(time_to), "page_size": page_size}


def user_timeline(user: str, *, time_from: str | date | None, time_to: str | date | None, page_size: int) -> Call:
    path = "/api/v1/users/" + urllib.parse.quote(user, safe="") + "/timeline"
    return Call("GET", path, query=_timeline_query(time_from=time_from, time_to=time_to, page_size=page_size))


def entity_timeline(
    entity_id: int, *, time_from: str | date | None, time_to: str | date | None, page_size: int
) -> Call:
    path = f"/api/v1/entities/{int(entity_id)}/timeline"
    return Call("GET", path, query=_timeline_query(time_from=time_from, time_to=time_to, page_size=page_size))


def entities_list(*, user: str | None, q: str | None, page_size: int) -> Call:
    return Call("GET", "/api/v1/entities", query={"user": user, "q": q, "page_size": page_size})


def entity_get(entity_id: int) -> Call:
    return Call("GET", f"/api/v1/entities/{int(entity_id)}")


def tools() -> Call:
    return Call("GET", "/api/v1/tools", result=lambda status, body: body["tools"])


def tool_call(*, name: str, arguments: dict[str, Any] | str, user: str | None, session: str | None) -> Call:
    return _post("/api/v1/tools/call", {"name": name, "arguments": arguments, "user": user, "session": session})


def _pinned(user: str | None, session: str | None) -> dict[str, str]:
    """The headers that pin an MCP tool call to an end user and session."""
    return _present({"X-Memory-User": user, "X-Memory-Session": session})


def mcp_tools(*, user: str | None, session: str | None) -> Call:
    return Call("GET", "/api/v1/mcp/tools", headers=_pinned(user, session), result=lambda status, body: body["tools"])


def mcp_tool_call(*, name: str, arguments: dict[str, Any], user: str | None, session: str | None) -> Call:
    return Call(
        "POST",
        "/api/v1/mcp/tools/call",
        json_body={"name": name, "arguments": arguments},
        headers=_pinned(user, session),
    )


def session_create(*, user: str, session: str) -> Call:
    return _post("/api/v1/sessions", {"user": user, "session": session})


def session_get(session: str) -> Call:
    return Call("GET", session_path(session))


def messages_append(session: str, *, messages: list, user: str | None) -> Call:
    return _post(session_path(session) + "/messages", {"user": user, "messages": messages})


def messages_list(session: str, *, page_size: int) -> Call:
    return Call("GET", session_path(session) + "/messages", query={"page_size": page_size})


def session_close(session: str) -> Call:
    return _post(session_path(session) + "/close", {})


def session_form(session: str) -> Call:
    return _post(session_path(session) + "/form", {})


def session_delete(session: str) -> Call:
    return Call("DELETE", session_path(session))


def _user_path(user: str) -> str:
    return "/api/v1/users/" + urllib.parse.quote(user, safe="")


def users_list(*, active_after: str | None, active_before: str | None, page_size: int) -> Call:
    query = {"active_after": active_after, "active_before": active_before, "page_size": page_size}
    return Call("GET", "/api/v1/users", query=query)


def user_get(user: str) -> Call:
    return Call("GET", _user_path(user))


def profile(*, user: str | None, categories: Sequence[str] | None, include_history: bool) -> Call:
    path = _user_path(user) + "/profile" if user is not None else "/api/v1/profile"
    query = {
        "category": ",".join(categories) if categories else None,
        "include_history": "true" if include_history else None,
    }
    return Call("GET", path, query=query)


def user_export(user: str) -> Call:
    return Call("GET", _user_path(user) + "/export", json_lines=True)


def user_erase(user: str) -> Call:
    return Call("DELETE", _user_path(user))


# --- the administration API ---------------------------------------------------------------------------------------


def _agent_path(agent: str) -> str:
    return "/api/v1/admin/agents/" + urllib.parse.quote(agent, safe="")


def agents_list(*, page_size: int) -> Call:
    return Call("GET", "/api/v1/admin/agents", query={"page_size": page_size})


def agent_create(*, agent: str, settings: dict[str, Any]) -> Call:
    return Call("POST", "/api/v1/admin/agents", json_body={"agent": agent, **settings})


def agent_get(agent: str) -> Call:
    return Call("GET", _agent_path(agent))


def agent_update(agent: str, *, settings: dict[str, Any]) -> Call:
    return Call("PATCH", _agent_path(agent), json_body=settings)


def api_keys_list(agent: str, *, page_size: int) -> Call:
    return Call("GET", _agent_path(agent) + "/keys", query={"page_size": page_size})


def api_key_create(agent: str, *, name: str) -> Call:
    return _post(_agent_path(agent) + "/keys", {"name": name})


def api_key_revoke(agent: str, key_id: int) -> Call:
    return Call("DELETE", f"{_agent_path(agent)}/keys/{int(key_id)}")


def webhooks_list(agent: str, *, page_size: int) -> Call:
    return Call("GET", _agent_path(agent) + "/webhooks", query={"page_size": page_size})


def webhook_create(agent: str, *, endpoint: dict[str, Any]) -> Call:
    return _post(_agent_path(agent) + "/webhooks", endpoint)


def _webhook_path(agent: str, webhook_id: int) -> str:
    return f"{_agent_path(agent)}/webhooks/{int(webhook_id)}"


def webhook_get(agent: str, webhook_id: int) -> Call:
    return Call("GET", _webhook_path(agent, webhook_id))


def webhook_update(agent: str, webhook_id: int, *, changes: dict[str, Any]) -> Call:
    return Call("PATCH", _webhook_path(agent, webhook_id), json_body=_present(changes))


def webhook_delete(agent: str, webhook_id: int) -> Call:
    return Call("DELETE", _webhook_path(agent, webhook_id))


def webhook_deliveries(agent: str, webhook_id: int, *, page_size: int) -> Call:
    return Call("GET", _webhook_path(agent, webhook_id) + "/deliveries", query={"page_size": page_size})
