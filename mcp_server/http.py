"""/mcp: the MCP server over Streamable HTTP, behind the REST API's own gate.

Every HTTP request is authenticated by the REST API's authentication class (`Authorization: Bearer <key>` or
`X-API-Key`, conflicting credentials refused) and counted by its throttle (one budget per key, shared with the REST
API), before the SDK reads a byte of the body; the body is capped at the REST API's DATA_UPLOAD_MAX_MEMORY_SIZE. A
refused request gets the API's one error shape with 401 / 429 / 400, as REST would answer.

Stateless and JSON responses (the SDK's `stateless_http` and `json_response`): no tool streams, and a stateless
endpoint can be served by any number of web processes behind a load balancer, with no session to pin.

Refusals of the HTTP exchange itself come in the API's error shape too, naming what was wrong: a body over the limit
(413, `body`), a Content-Type other than JSON (415, `Content-Type`), an Accept that takes no JSON (406, `Accept`), a
protocol version this server does not speak (400, `MCP-Protocol-Version`, with the versions it does). An error about
the JSON-RPC message itself (unreadable JSON, an unknown method, invalid params) stays a JSON-RPC error, as the
protocol has it: MCP clients hand that error, with its message, to their caller."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any, cast

from django.conf import settings
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from rest_framework import exceptions
from rest_framework.request import Request
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send

from agents.authentication import AgentAPIKeyAuthentication
from agents.throttling import AgentKeyRateThrottle
from core.api.errors import error_body
from core.api.middleware import REQUEST_ID_HEADER, request_id_from
from core.runtime.logging import current_agent, current_request_id
from mcp_server.metrics import mcp_request_counted
from mcp_server.server import CALLER_STATE_KEY, in_django_thread, memory_mcp_server
from mcp_server.tools import SESSION_HEADER, USER_HEADER, Caller, MemoryToolError, pinned_id

MCP_PATH = "/mcp"
PROTOCOL_VERSION_HEADER = "MCP-Protocol-Version"
PROTOCOL_VERSIONS = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)


class _Refused(Exception):
    def __init__(
        self,
        *,
        status: int,
        code: str,
        message: str,
        headers: dict[str, str] | None = None,
        fields: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.response = JSONResponse(
            error_body(
                code=code, message=message, fields={name: [problem] for name, problem in (fields or {}).items()}
            ),
            status_code=status,
            headers=headers,
        )


_METHOD_NOT_ALLOWED = JSONResponse(
    error_body(
        code="method_not_allowed",
        message="This MCP endpoint is stateless and offers no server-to-client stream: send requests with POST.",
        fields={},
    ),
    status_code=405,
    headers={"Allow": "POST"},
)


def _exchange_refusal(headers: Headers) -> _Refused | None:
    """What is wrong with the HTTP exchange itself, checked before the SDK reads the body: its Content-Type, its
    protocol version."""
    media_type = headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != "application/json":
        sent = f"it was {media_type!r}" if media_type else "there was none"
        return _Refused(
            status=415,
            code="unsupported_media_type",
            message=f"Send the JSON-RPC message as application/json ({sent}).",
            fields={"Content-Type": "must be application/json"},
        )
    version = headers.get(PROTOCOL_VERSION_HEADER)
    if version is not None and version not in PROTOCOL_VERSIONS:
        spoken = ", ".join(PROTOCOL_VERSIONS)
        return _Refused(
            status=400,
            code="unsupported_protocol_version",
            message=f"{PROTOCOL_VERSION_HEADER} {version!r} is not a version this server speaks: {spoken}.",
            fields={PROTOCOL_VERSION_HEADER: f"one of {spoken}"},
        )
    return None


def _sdk_refusal(status: int, body: bytes) -> _Refused:
    """The SDK's own refusal of an exchange (a body over the limit, an Accept it cannot answer), reworded in the
    API's error shape."""
    if status == 413:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return _Refused(
            status=413,
            code="request_too_large",
            message=f"The request body is larger than {limit} bytes.",
            fields={"body": f"at most {limit} bytes"},
        )
    try:
        said = str(json.loads(body)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        said = body.decode("utf-8", "replace").strip()
    return _Refused(
        status=406,
        code="not_acceptable",
        message=f"Accept application/json (and text/event-stream): {said}",
        fields={"Accept": "must include application/json"},
    )


def _sdk_refusals_shaped(send: Send) -> Send:
    """`send`, with the SDK's 406 and 413 answers (plain text, or a JSON-RPC error about the exchange) replaced by
    the API's error shape."""
    held: dict[str, Any] = {}

    async def shaped(message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] in (406, 413):
            held.update(status=message["status"], body=b"")
            return
        if message["type"] == "http.response.body" and held:
            held["body"] += message.get("body", b"")
            if not message.get("more_body", False):
                await _sdk_refusal(held["status"], held["body"]).response({"type": "http"}, _nothing, send)
            return
        await send(message)

    return shaped


async def _nothing() -> Message:
    return {"type": "http.disconnect"}


def _pinned(headers: Headers, name: str) -> str | None:
    try:
        return pinned_id(header=name, value=headers.get(name))
    except MemoryToolError as error:
        raise _Refused(status=400, code="invalid", message=error.message, fields={name: "not a valid id"}) from error


def caller_authenticate(*, headers: Headers) -> Caller:
    """The caller of one HTTP request, as the REST API would authenticate and throttle it; _Refused otherwise."""
    try:
        # What the authentication and the throttle read of a request (they take no Django request here).
        authenticated = AgentAPIKeyAuthentication().authenticate(cast(Request, SimpleNamespace(headers=headers)))
    except exceptions.AuthenticationFailed as failed:
        raise _Refused(
            status=401,
            code="authentication_failed",
            message=str(failed.detail),
            headers={"WWW-Authenticate": 'Bearer realm="api"'},
        ) from failed
    if authenticated is None:
        raise _Refused(
            status=401,
            code="not_authenticated",
            message="An agent API key is required: Authorization: Bearer <key>, or X-API-Key.",
            headers={"WWW-Authenticate": 'Bearer realm="api"'},
        )
    _, api_key = authenticated
    throttle = AgentKeyRateThrottle()
    if not throttle.allow_request(cast(Request, SimpleNamespace(auth=api_key, user=None)), None):
        wait = throttle.wait() or 1
        raise _Refused(
            status=429,
            code="throttled",
            message=f"Request was throttled. Expected available in {wait} seconds.",
            headers={"Retry-After": str(wait)},
        )
    return Caller(agent=api_key.agent, user=_pinned(headers, USER_HEADER), session=_pinned(headers, SESSION_HEADER))


class MCPEndpoint:
    """The ASGI app of /mcp. `lifespan()` must be entered once per process before it serves (mcp_server.wsgi)."""

    def __init__(self) -> None:
        self.session_manager = StreamableHTTPSessionManager(
            app=memory_mcp_server(),
            json_response=True,
            stateless=True,
            max_request_body_size=settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
        )

    @contextlib.asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        async with self.session_manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Each request as Django's middleware treats the API's: an X-Request-ID (the caller's or a new one) in its
        log lines, its tool calls' and its response; counted and timed in the request metrics under the route
        "mcp"."""
        headers = Headers(scope=scope)
        request_id = request_id_from(headers.get(REQUEST_ID_HEADER))
        request_id_token, agent_token = current_request_id.set(request_id), current_agent.set(None)
        try:
            with mcp_request_counted(method=scope.get("method", "")) as counted:

                async def send_identified(message: Message) -> None:
                    if message["type"] == "http.response.start":
                        counted["status"] = message["status"]
                        message = {
                            **message,
                            "headers": [*message.get("headers", []), (b"x-request-id", request_id.encode())],
                        }
                    await send(message)

                await self._serve(scope, receive, send_identified, headers=headers)
        finally:
            current_request_id.reset(request_id_token)
            current_agent.reset(agent_token)

    async def _serve(self, scope: Scope, receive: Receive, send: Send, *, headers: Headers) -> None:
        if scope.get("method") == "GET":
            # The optional server-to-client stream: a stateless server has no session to send anything on, and an open
            # stream would hold one of the process's threads for as long as the client keeps it (the spec's answer).
            await _METHOD_NOT_ALLOWED(scope, receive, send)
            return
        try:
            caller = await in_django_thread(caller_authenticate, headers=headers)
        except _Refused as refused:
            await refused.response(scope, receive, send)
            return
        if (wrong_exchange := _exchange_refusal(headers)) is not None:
            await wrong_exchange.response(scope, receive, send)
            return
        current_agent.set(caller.agent.external_id)
        scope.setdefault("state", {})[CALLER_STATE_KEY] = dataclasses.replace(
            caller, request_id=current_request_id.get()
        )
        await self.session_manager.handle_request(scope, receive, _sdk_refusals_shaped(send))
