"""The MCP server's own metric families (core.observability.metrics has the generic ones): tool calls by tool and
outcome, and their time, whichever transport carried them (/mcp, or the stdio server through the REST twin). /mcp's
HTTP requests are counted in core's request families under the route "mcp", beside Django's routes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from prometheus_client import Counter, Histogram

from core.observability.metrics import (
    NAMESPACE,
    REQUEST_BUCKETS,
    http_request_observe,
    label_bounded,
    metrics_enabled,
)

MCP_ROUTE = "mcp"

mcp_tool_calls = Counter(
    "mcp_tool_calls",
    "MCP tool calls, by tool and outcome (ok; tool_error: the model's mistake, returned to it as a tool error; failed: "
    "the service failed on the call).",
    ["tool", "outcome"],
    namespace=NAMESPACE,
)
mcp_tool_call_duration = Histogram(
    "mcp_tool_call_duration_seconds",
    "Time of MCP tool calls in the service, by tool.",
    ["tool"],
    namespace=NAMESPACE,
    buckets=REQUEST_BUCKETS,
)


def mcp_tool_call_count(*, tool: str, known_tools: frozenset[str], outcome: str, seconds: float) -> None:
    """`known_tools` bounds the label: a model calling made-up names counts under "other"."""
    if not metrics_enabled():
        return
    name = label_bounded(tool, allowed=known_tools)
    mcp_tool_calls.labels(name, outcome).inc()
    mcp_tool_call_duration.labels(name).observe(seconds)


@contextmanager
def mcp_request_counted(*, method: str) -> Iterator[dict]:
    """Counts one /mcp HTTP request in the request families; the caller puts the response's status in the dict."""
    started, response = time.perf_counter(), {"status": 500}
    try:
        yield response
    finally:
        if metrics_enabled():
            seconds = time.perf_counter() - started
            http_request_observe(route=MCP_ROUTE, method=method, status=response["status"], seconds=seconds)
