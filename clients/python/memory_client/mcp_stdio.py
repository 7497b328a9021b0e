"""`agent-memory-mcp`: the memory service's MCP server over stdio, for desktop clients (Claude Desktop, Cursor,
VS Code) that start an MCP server as a local process. It talks to the service's REST API through MemoryClient: the
tools are the ones the service's /mcp serves (GET /api/v1/mcp/tools), run by the service (POST /api/v1/mcp/tools/call),
so both transports offer the same tools with the same rules.

Configured by the environment:
    MEMORY_API_KEY      the agent's API key (required)
    MEMORY_URL          the service's base URL (default http://127.0.0.1:8000)
    MEMORY_USER         the end user the conversation is about (optional: without it, each call names its `user`)
    MEMORY_SESSION      the session (optional)

Needs the `mcp` extra: pip install "agent-memory-client[mcp]"."""

from __future__ import annotations

import json
import os
import sys
import urllib.error
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from memory_client.client import MemoryAPIError, MemoryClient

DEFAULT_SERVICE_URL = "http://127.0.0.1:8000"
CONTEXT_RESOURCE_URI = "memory://context"
USER_CONTEXT_TEMPLATE = "memory://users/{user}/context"

Result = TypeVar("Result")


class StdioMemoryServer:
    """The MCP handlers over one MemoryClient, for the user and session the environment pins (if any)."""

    def __init__(self, *, client: MemoryClient, user: str | None = None, session: str | None = None) -> None:
        self.client = client
        self.user = user
        self.session = session

    async def _rest(self, function: Callable[..., Result], /, **kwargs: Any) -> Result:
        """A REST call off the event loop (the client is synchronous)."""
        return await anyio.to_thread.run_sync(lambda: function(**kwargs))

    def _unreachable(self, error: Exception) -> str:
        if isinstance(error, MemoryAPIError):
            return f"the memory service refused the call ({error.status} {error.code}): {error.message}"
        return f"the memory service at {self.client.base_url} cannot be reached ({error}); try again later."

    async def list_tools(self, ctx: ServerRequestContext, params: Any) -> types.ListToolsResult:
        try:
            tools = await self._rest(self.client.mcp_tools, user=self.user, session=self.session)
        except (MemoryAPIError, urllib.error.URLError, OSError) as error:
            raise MCPError(code=types.INTERNAL_ERROR, message=self._unreachable(error)) from error
        return types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in tools])

    async def call_tool(self, ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            outcome = await self._rest(
                self.client.mcp_tool_call,
                name=params.name,
                arguments=params.arguments or {},
                user=self.user,
                session=self.session,
            )
        except MemoryAPIError as error:
            outcome = {"ok": False, "error": self._unreachable(error), "fields": error.fields}
        except (urllib.error.URLError, OSError) as error:
            outcome = {"ok": False, "error": self._unreachable(error), "fields": {}}
        if outcome.get("ok"):
            result = outcome.get("result") or {}
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
                structured_content=result,
            )
        error = outcome.get("error") or "the tool call failed."
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=error)],
            structured_content={"error": {"message": error, "fields": outcome.get("fields") or {}}},
            is_error=True,
        )

    async def list_resources(self, ctx: ServerRequestContext, params: Any) -> types.ListResourcesResult:
        about = f"user {self.user!r}" if self.user else "this assistant (no MEMORY_USER set)"
        resource = types.Resource(
            uri=CONTEXT_RESOURCE_URI,
            name="memory-context",
            title="Memory context",
            description=f"The always-in-context memory block of {about}, to put in the system prompt.",
            mime_type="text/plain",
        )
        return types.ListResourcesResult(resources=[resource])

    async def list_resource_templates(
        self, ctx: ServerRequestContext, params: Any
    ) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(
            uri_template=USER_CONTEXT_TEMPLATE,
            name="user-memory-context",
            title="A user's memory context",
            description="The always-in-context memory block of one end user (their id in your application).",
            mime_type="text/plain",
        )
        return types.ListResourceTemplatesResult(resource_templates=[template])

    def _resource_user(self, uri: str) -> str | None:
        if uri == CONTEXT_RESOURCE_URI:
            return self.user
        prefix, suffix = USER_CONTEXT_TEMPLATE.split("{user}")
        if uri.startswith(prefix) and uri.endswith(suffix) and len(uri) > len(prefix) + len(suffix):
            user = uri[len(prefix) : -len(suffix)]
            if self.user is not None and user != self.user:
                raise MCPError(code=types.INVALID_PARAMS, message=f"uri: this server is for user {self.user!r}.")
            return user
        raise MCPError(
            code=types.INVALID_PARAMS,
            message=f"uri: no resource {uri!r}; read {CONTEXT_RESOURCE_URI} or {USER_CONTEXT_TEMPLATE}.",
        )

    async def read_resource(
        self, ctx: ServerRequestContext, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        user = self._resource_user(uri)
        try:
            context = await self._rest(self.client.context, user=user, session=self.session)
        except (MemoryAPIError, urllib.error.URLError, OSError) as error:
            raise MCPError(code=types.INVALID_PARAMS, message=self._unreachable(error)) from error
        text = (context or {}).get("text", "")
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="text/plain", text=text)]
        )

    def server(self) -> Server:
        return Server(
            "agent-memory",
            version="1",
            title="Agent memory",
            instructions="Long-term memory of this assistant: read memory://context at the start, search_memory or "
            "search_conversations before answering what may depend on earlier conversations, save_memory for "
            "durable facts.",
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_resources=self.list_resources,
            on_list_resource_templates=self.list_resource_templates,
            on_read_resource=self.read_resource,
        )


def server_from_environment(environ: dict[str, str] | None = None) -> StdioMemoryServer:
    environ = dict(os.environ if environ is None else environ)
    api_key = environ.get("MEMORY_API_KEY", "").strip()
    if not api_key:
        raise SystemExit("agent-memory-mcp: set MEMORY_API_KEY to the agent's API key.")
    client = MemoryClient(environ.get("MEMORY_URL") or DEFAULT_SERVICE_URL, api_key)
    return StdioMemoryServer(
        client=client, user=environ.get("MEMORY_USER") or None, session=environ.get("MEMORY_SESSION") or None
    )


async def _serve(memory_server: StdioMemoryServer) -> None:
    server = memory_server.server()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main() -> None:
    memory_server = server_from_environment()
    try:
        anyio.run(_serve, memory_server)
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
