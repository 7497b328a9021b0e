"""Request ids, what the API refuses before any view (unrouted paths, repeated query parameters) in its one error
shape, and the rate limit of the admin's login form."""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse

from core.api.errors import error_body, is_api_path, not_found_response
from core.runtime.logging import current_agent, current_request_id
from core.runtime.ratelimit import window_clear, window_count, window_hit, window_retry_after

REQUEST_ID_HEADER = "X-Request-ID"
_CLIENT_REQUEST_ID = re.compile(r"^[A-Za-z0-9._\-]{1,64}$")


def request_id_from(given: str | None) -> str:
    """The caller's X-Request-ID when it is a short token (so their logs and ours share it), else a new one."""
    return given if given and _CLIENT_REQUEST_ID.match(given) else uuid.uuid4().hex


class RequestIdMiddleware:
    """Every request gets an id: the caller's X-Request-ID when it is a sane token (so a proxy's or client's id
    follows the request), else a new one. It is in every log line of the request and in the response header."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request_id_from(request.headers.get(REQUEST_ID_HEADER, ""))
        request.request_id = request_id  # type: ignore[attr-defined]  # Django's requests take attributes of the app
        token, agent_token = current_request_id.set(request_id), current_agent.set(None)
        try:
            response = self.get_response(request)
        finally:
            # Kept on the request for the lines Django logs after the middleware (django.request's "Not Found").
            request.agent_external_id = current_agent.get()  # type: ignore[attr-defined]  # as request_id
            current_request_id.reset(token)
            current_agent.reset(agent_token)
        response[REQUEST_ID_HEADER] = request_id
        return response


class ApiNotFoundMiddleware:
    """A path under /api/ or /v1/ that no route matches answers 404 in the API's error shape. Django's handler404
    does so only with DEBUG off; with DEBUG on (`make run`) its HTML debug page would answer instead. Placed outside
    CommonMiddleware, so a path missing only its trailing slash is still redirected."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            response.status_code == 404
            and is_api_path(request.path)
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            return not_found_response()
        return response


class RepeatedQueryParameterMiddleware:
    """A query parameter given more than once is a 400 naming it on API paths. Django reads the last value where a
    proxy or a firewall in front may read the first (HTTP parameter pollution), and no endpoint takes a list in its
    query, so the request is ambiguous rather than wrong in one value."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if is_api_path(request.path):
            repeated = sorted(name for name, values in request.GET.lists() if len(values) > 1)
            if repeated:
                return JsonResponse(
                    error_body(
                        code="invalid",
                        message=f"Invalid input: {', '.join(repeated)}.",
                        fields={name: ["Given more than once; give it once."] for name in repeated},
                    ),
                    status=400,
                )
        return self.get_response(request)


class AdminLoginRateLimitMiddleware:
    """At most ADMIN_LOGIN_MAX_FAILURES failed logins per ADMIN_LOGIN_WINDOW_SECONDS, counted per client address
    and per username (so neither one address trying many names nor many addresses trying one name get far);
    further attempts get 429 with Retry-After without the password being checked. A failed login is the form shown
    again (200); a successful one (a redirect) clears the username's count."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method != "POST" or request.path != reverse("admin:login"):
            return self.get_response(request)
        window = settings.ADMIN_LOGIN_WINDOW_SECONDS
        username = hashlib.sha256(request.POST.get("username", "").strip().lower().encode()).hexdigest()[:32]
        keys = [f"admin-login-ip:{request.META.get('REMOTE_ADDR', '')}", f"admin-login-user:{username}"]
        if any(window_count(key, window) >= settings.ADMIN_LOGIN_MAX_FAILURES for key in keys):
            retry_after = window_retry_after(window)
            response = HttpResponse(
                f"Too many failed login attempts. Try again in {retry_after} seconds.\n",
                status=429,
                content_type="text/plain; charset=utf-8",
            )
            response["Retry-After"] = str(retry_after)
            return response
        response = self.get_response(request)
        if response.status_code == 200:
            for key in keys:
                window_hit(key, window)
        elif response.status_code in (301, 302, 303):
            window_clear(keys[1], window)
        return response
