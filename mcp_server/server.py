"""The MCP server (the SDK's low-level `Server`): tools/list, tools/call, resources/list, resources/templates/list and
resources/read, answered from the registry in mcp_server.tools for the caller that mcp_server.http authenticated.

Handlers are async and the registry is Django code (ORM, cache): each call runs on one of the process's long-lived
Django threads, with Django's per-request connection handling around it, so that the event loop never waits on the
database."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import mcp_types as types
from django.conf import settings
from django.db import close_old_connections
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from core.runtime.logging import current_agent, current_request_id
from core.runtime.request_path_cache import request_path_generation_pinned
from mcp_server.tools import (
    CONTEXT_RESOURCE_URI,
    PROFILE_RESOURCE_URI,
    USER_CONTEXT_TEMPLATE,
    USER_PROFILE_TEMPLATE,
    Caller,
    MemoryToolError,
    memory_context_resource_text,
    memory_profile_resource_text,
    memory_tool_call,
    memory_tool_definitions,
)

logger = logging.getLogger(__name__)

SERVER_NAME = "agent-memory"
CALLER_STATE_KEY = "memory_caller"
INSTRUCTIONS = (
    "Long-term memory of this assistant. At the start of a conversation read the user's context block "
    "(get_memory_context, or the memory://context resource). Before answering something that may depend on earlier "
    "conversations, search_memory (remembered facts), get_entity (someone or something by name and how it relates to "
    "others) or search_conversations (what was said). Save durable facts the user tells you with save_memory, one per "
    "call; correct or forget them with update_memory / delete_memory."
)

Result = TypeVar("Result")

# Long-lived threads, so that each keeps its database connection from one call to the next as gunicorn's threads do.
# anyio's worker threads end with the task that started them, which under mcp_server.wsgi is each request's: every
# call then started a thread and opened a connection, +19 ms a search (docs/benchmarks/history.md section 6). No more at
# once than the gunicorn threads that can wait on them.
_django_threads = ThreadPoolExecutor(max_workers=settings.WEB_THREADS, thread_name_prefix="mcp-django")


@contextlib.contextmanager
def _log_context_of(caller: object) -> Iterator[None]:
    """A tool call's log lines carry its caller's request id and agent: the SDK runs the call in its own task, which
    does not inherit the HTTP request's context. Without a caller the context the thread inherited stays."""
    if not isinstance(caller, Caller):
        yield
        return
    request_id, agent = current_request_id.set(caller.request_id), current_agent.set(caller.agent.external_id)
    try:
        yield
    finally:
        current_request_id.reset(request_id)
        current_agent.reset(agent)


async def in_django_thread(function: Callable[..., Result], /, **kwargs: Any) -> Result:
    """Run Django code off the event loop, opening and releasing database connections as a request would."""

    def run() -> Result:
        close_old_connections()
        try:
            with _log_context_of(kwargs.get("caller")), request_path_generation_pinned():
                return function(**kwargs)
        finally:
            close_old_connections()

    return await asyncio.get_running_loop().run_in_executor(_django_threads, contextvars.copy_context().run, run)


def request_caller(ctx: ServerRequestContext) -> Caller:
    """The caller mcp_server.http put on the HTTP request's scope after authenticating it."""
    request = ctx.request
    caller = request.scope.get("state", {}).get(CALLER_STATE_KEY) if request is not None else None
    if caller is None:  # never served without mcp_server.http in front
        raise MCPError(code=types.INVALID_REQUEST, message="not authenticated")
    return caller


async def _list_tools(ctx: ServerRequestContext, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    caller = request_caller(ctx)
    definitions = memory_tool_definitions(caller=caller)
    return types.ListToolsResult(tools=[types.Tool.model_validate(definition) for definition in definitions])


def tool_result(*, ok: bool, result: dict | None, error: str | None, fields: dict | None) -> types.CallToolResult:
    """A tool's outcome as MCP returns it: the JSON as text (what every client shows a model) and as structured
    content; a failure is a tool error (isError) whose text names the argument, so the model can fix its call."""
    if ok:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
            structured_content=result,
        )
    body = {"error": {"message": error, "fields": fields or {}}}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=error or "the tool call failed.")],
        structured_content=body,
        is_error=True,
    )


async def _call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
    caller = request_caller(ctx)
    try:
        outcome = await in_django_thread(
            memory_tool_call, caller=caller, name=params.name, arguments=params.arguments or {}
        )
    except Exception:
        # A fault of the service, not of the call: the model gets a tool error it can report, never a dropped call.
        logger.exception("MCP tool call %s failed", params.name)
        return tool_result(
            ok=False, result=None, error="the memory service failed on this call; try again later.", fields=None
        )
    return tool_result(ok=outcome.ok, result=outcome.result, error=outcome.error, fields=outcome.fields)


async def _list_resources(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    caller = request_caller(ctx)
    about = f"user {caller.user!r}" if caller.user else "this assistant (no user named on the connection)"
    resource = types.Resource(
        uri=CONTEXT_RESOURCE_URI,
        name="memory-context",
        title="Memory context",
        description=f"The always-in-context memory block of {about}, to put in the system prompt.",
        mime_type="text/plain",
    )
    profile = types.Resource(
        uri=PROFILE_RESOURCE_URI,
        name="memory-profile",
        title="Memory profile",
        description=f"What memory holds of {about} by category (get_profile's answer).",
        mime_type="application/json",
    )
    return types.ListResourcesResult(resources=[resource, profile])


async def _list_resource_templates(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    template = types.ResourceTemplate(
        uri_template=USER_CONTEXT_TEMPLATE,
        name="user-memory-context",
        title="A user's memory context",
        description="The always-in-context memory block of one end user (their id in your application).",
        mime_type="text/plain",
    )
    profile = types.ResourceTemplate(
        uri_template=USER_PROFILE_TEMPLATE,
        name="user-memory-profile",
        title="A user's memory profile",
        description="What memory holds of one end user by category (get_profile's answer for them).",
        mime_type="application/json",
    )
    return types.ListResourceTemplatesResult(resource_templates=[template, profile])


def _resource_user(*, uri: str, caller: Caller, uri_of_caller: str, template: str) -> str | None:
    """The user a resource URI is about (the caller's for `uri_of_caller`, else the one `template` names); MCPError
    (invalid params) for a URI that names no such resource."""
    if uri == uri_of_caller:
        return caller.user
    prefix, suffix = template.split("{user}")
    if uri.startswith(prefix) and uri.endswith(suffix) and len(uri) > len(prefix) + len(suffix):
        return uri[len(prefix) : -len(suffix)]
    raise MCPError(
        code=types.INVALID_PARAMS,
        message=f"uri: no resource {uri!r}; read {CONTEXT_RESOURCE_URI}, {USER_CONTEXT_TEMPLATE}, "
        f"{PROFILE_RESOURCE_URI} or {USER_PROFILE_TEMPLATE}.",
    )


def _is_profile(uri: str) -> bool:
    return uri == PROFILE_RESOURCE_URI or (uri.startswith("memory://users/") and uri.endswith("/profile"))


async def _read_resource(
    ctx: ServerRequestContext, params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    caller = request_caller(ctx)
    uri = str(params.uri)
    profile = _is_profile(uri)
    if profile:
        user = _resource_user(
            uri=uri, caller=caller, uri_of_caller=PROFILE_RESOURCE_URI, template=USER_PROFILE_TEMPLATE
        )
    else:
        user = _resource_user(
            uri=uri, caller=caller, uri_of_caller=CONTEXT_RESOURCE_URI, template=USER_CONTEXT_TEMPLATE
        )
    try:
        read = memory_profile_resource_text if profile else memory_context_resource_text
        text = await in_django_thread(read, caller=caller, user=user)
    except MemoryToolError as error:
        raise MCPError(code=types.INVALID_PARAMS, message=error.message) from error
    mime_type = "application/json" if profile else "text/plain"
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=mime_type, text=text)])


def memory_mcp_server() -> Server:
    return Server(
        SERVER_NAME,
        version="1",
        title="Agent memory",
        instructions=INSTRUCTIONS,
        on_list_tools=_list_tools,
        on_call_tool=_call_tool,
        on_list_resources=_list_resources,
        on_list_resource_templates=_list_resource_templates,
        on_read_resource=_read_resource,
    )
