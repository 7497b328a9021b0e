"""A small, typed client over the standard library's urllib: no dependencies to pin next to an agent's own."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any, cast

from memory_client.types import (
    AppendResult,
    FormationQueued,
    MemoryBundle,
    MemoryContext,
    MessageIn,
    SessionInfo,
    StoredMessage,
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
        _, page = self._request("GET", _session_path(session) + "/messages", query={"page_size": page_size})
        while True:
            yield from page["results"]
            if not page.get("next"):
                return
            _, page = self._request("GET", page["next"])

    def session_close(self, session: str) -> SessionInfo:
        """Mark the session closed; formation of what is not formed yet is queued."""
        return cast(SessionInfo, self._post(_session_path(session) + "/close", {}))

    def session_form(self, session: str) -> FormationQueued:
        """Queue memory formation of the session now."""
        return cast(FormationQueued, self._post(_session_path(session) + "/form", {}))

    # --- plumbing -------------------------------------------------------------------------------------------------

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
                return response.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as error:
            if error.code == 304:
                return 304, None
            raise _api_error(error) from None


def _session_path(session: str) -> str:
    return "/api/v1/sessions/" + urllib.parse.quote(session, safe="")


def _api_error(error: urllib.error.HTTPError) -> MemoryAPIError:
    raw = error.read()
    try:
        body = json.loads(raw)["error"]
        return MemoryAPIError(status=error.code, code=body["code"], message=body["message"], fields=body.get("fields"))
    except (ValueError, KeyError, TypeError):
        return MemoryAPIError(status=error.code, code="http_error", message=raw.decode(errors="replace")[:500])
