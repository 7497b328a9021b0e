"""The service as one WSGI application, the one gunicorn serves (memory_project/wsgi.py): Django, and the MCP
endpoint at /mcp, an ASGI application run on an event loop of its own in each web process.

REST searches are the service's hot path: served by gunicorn's threads they cost less CPU and give more searches/s
than Django behind an ASGI server (docs/benchmarks/history.md section 2, docs/architecture.md). The MCP endpoint is
stateless with JSON responses (mcp_server.http): one request and one response, which a2wsgi carries from a gunicorn
thread to the loop and back."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import cast

from a2wsgi import ASGIMiddleware
from a2wsgi.wsgi_typing import Environ

from mcp_server.http import MCP_PATH, MCPEndpoint

WSGIApplication = Callable[[dict, Callable], Iterable[bytes]]
STARTUP_TIMEOUT_SECONDS = 30


@dataclass(frozen=True)
class _RunningEndpoint:
    served: ASGIMiddleware
    loop: asyncio.AbstractEventLoop
    thread: threading.Thread
    stopping: asyncio.Event
    lifespan: concurrent.futures.Future[None]


async def _endpoint_run(
    *, endpoint: MCPEndpoint, started: concurrent.futures.Future[None], stopping: asyncio.Event
) -> None:
    """The endpoint's lifespan (the MCP session manager), entered until `stopping` is set."""
    try:
        async with endpoint.lifespan():
            started.set_result(None)
            await stopping.wait()
    except BaseException as error:
        if not started.done():
            started.set_exception(error)
        raise


class ServiceApplication:
    """Django, with /mcp routed to the MCP endpoint. The endpoint's event loop starts with the first /mcp request, in
    the process that serves it: after gunicorn has forked its workers, which a fork would not carry threads into."""

    def __init__(self, *, django_application: WSGIApplication) -> None:
        self.django_application = django_application
        self._lock = threading.Lock()
        self._endpoint: _RunningEndpoint | None = None

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        if environ.get("PATH_INFO", "").rstrip("/") == MCP_PATH:
            return self._endpoint_started().served(cast(Environ, environ), start_response)
        return self.django_application(environ, start_response)

    def _endpoint_started(self) -> _RunningEndpoint:
        with self._lock:
            if self._endpoint is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="mcp-event-loop", daemon=True)
                thread.start()
                endpoint = MCPEndpoint()
                started: concurrent.futures.Future[None] = concurrent.futures.Future()
                stopping = asyncio.Event()
                lifespan = asyncio.run_coroutine_threadsafe(
                    _endpoint_run(endpoint=endpoint, started=started, stopping=stopping), loop
                )
                started.result(timeout=STARTUP_TIMEOUT_SECONDS)
                self._endpoint = _RunningEndpoint(
                    # Starlette's ASGI types (the endpoint's) and a2wsgi's describe the same protocol differently.
                    served=ASGIMiddleware(endpoint, loop=loop),  # type: ignore[arg-type]
                    loop=loop,
                    thread=thread,
                    stopping=stopping,
                    lifespan=lifespan,
                )
            return self._endpoint

    def close(self) -> None:
        """Ends the MCP endpoint's lifespan and its loop (a process that exits needs none of this: the loop's thread
        is a daemon; tests that start a service per test do)."""
        with self._lock:
            running, self._endpoint = self._endpoint, None
        if running is None:
            return
        running.loop.call_soon_threadsafe(running.stopping.set)
        running.lifespan.result(timeout=STARTUP_TIMEOUT_SECONDS)
        running.loop.call_soon_threadsafe(running.loop.stop)
        running.thread.join(timeout=STARTUP_TIMEOUT_SECONDS)
        running.loop.close()
