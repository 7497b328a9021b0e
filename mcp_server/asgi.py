"""The service as one ASGI application: /mcp (the MCP endpoint) beside Django's ASGI handler, which serves everything
else, with the MCP session manager started and stopped by the server's lifespan. memory_project.asgi builds the one
that uvicorn serves; tests build their own (a session manager runs once)."""

from __future__ import annotations

import contextlib

from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_server.http import MCP_PATH, MCPEndpoint


def service_asgi_application(*, django_application: ASGIApp) -> ASGIApp:
    mcp_endpoint = MCPEndpoint()

    async def lifespan(receive: Receive, send: Send) -> None:
        stack = contextlib.AsyncExitStack()
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await stack.enter_async_context(mcp_endpoint.lifespan())
                except Exception as error:  # /mcp cannot be served: the server says so and does not start
                    await send({"type": "lifespan.startup.failed", "message": str(error)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await stack.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def application(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
        elif scope["type"] == "http" and scope["path"].rstrip("/") == MCP_PATH:
            await mcp_endpoint(scope, receive, send)
        else:
            await django_application(scope, receive, send)

    return application
