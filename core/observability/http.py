"""Request metrics and the /metrics endpoint."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from core.api.errors import error_body
from core.observability.access import metrics_access_refusal
from core.observability.metrics import (
    OTHER,
    http_request_observe,
    metrics_enabled,
    scrape_registry,
    search_stage_duration,
)
from core.runtime.timing import stages_recorded

UNMATCHED_ROUTE = "unmatched"
# The admin's many model pages are one route in metrics: their traffic is an operator's, not the service's.
ADMIN_ROUTE = "admin"


def route_of(request: HttpRequest) -> str:
    """The URL pattern that answered (`api/v1/agents/<str:agent_id>/facts/search/`), never the path: the label's
    values are the project's routes, however many agents, users and sessions there are."""
    match = getattr(request, "resolver_match", None)
    if match is None:
        return UNMATCHED_ROUTE
    route = match.route or match.view_name or OTHER
    return ADMIN_ROUTE if route.startswith("admin/") else route


class MetricsMiddleware:
    """Counts each request by route, method and status, times it, and records the stages it timed (core.runtime.timing).
    Sits inside core.runtime.timing.ServerTimingMiddleware, whose stage list it reads."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        elapsed = time.perf_counter() - started
        route = route_of(request)
        http_request_observe(route=route, method=request.method or "", status=response.status_code, seconds=elapsed)
        for stage, seconds in stages_recorded():
            search_stage_duration.labels(route, stage).observe(seconds)
        return response


def metrics_view(request: HttpRequest) -> HttpResponse:
    """GET /metrics: the Prometheus text format, for a scraper with the bearer token or from an allowed network."""
    if not metrics_enabled():
        return JsonResponse(error_body(code="not_found", message="Metrics are off (METRICS_ENABLED)."), status=404)
    refusal = metrics_access_refusal(
        remote_address=request.META.get("REMOTE_ADDR", ""), authorization=request.headers.get("Authorization", "")
    )
    if refusal is not None:
        code = "not_authenticated" if refusal.status == 401 else "permission_denied"
        response = JsonResponse(error_body(code=code, message=refusal.message), status=refusal.status)
        if refusal.status == 401:
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(generate_latest(scrape_registry(domain=True)), content_type=CONTENT_TYPE_LATEST)
