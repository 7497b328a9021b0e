"""Where a request's time goes, in a Server-Timing response header (W3C Server Timing): the stages the request
recorded (`embed;dur=3.90, text_sql;dur=1.20, ...`, milliseconds) and `app`, its whole time in Django. Browsers'
developer tools show it; benchmarks/search_latency.py reads it to split a search's latency into embedding, SQL,
fusion, serialisation and HTTP (the client's time less `app`). Recording costs a perf_counter call and an append."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, copy_context
from typing import TypeVar

from django.http import HttpRequest, HttpResponse

_stages: ContextVar[list[tuple[str, float]] | None] = ContextVar("server_timing_stages", default=None)
T = TypeVar("T")


def stage_record(name: str, seconds: float) -> None:
    stages = _stages.get()
    if stages is not None:
        stages.append((name, seconds))


@contextmanager
def stage_timed(name: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        stage_record(name, time.perf_counter() - started)


def stages_recorded() -> list[tuple[str, float]]:
    """The stages recorded so far in this request (empty outside one): what the metrics middleware observes."""
    return list(_stages.get() or ())


def in_request_context(function: Callable[[], T]) -> Callable[[], T]:
    """`function` bound to the caller's context, for a pool thread whose stages belong to the caller's request."""
    context = copy_context()
    return lambda: context.run(function)


class ServerTimingMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        stages: list[tuple[str, float]] = []
        token = _stages.set(stages)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
        finally:
            _stages.reset(token)
        stages.append(("app", time.perf_counter() - started))
        response["Server-Timing"] = ", ".join(f"{name};dur={seconds * 1000:.2f}" for name, seconds in stages)
        return response
