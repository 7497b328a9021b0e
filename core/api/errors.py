"""The one error shape of the API: {"error": {"code", "message", "fields"}} for every 4xx and 5xx."""

from __future__ import annotations

import logging
from typing import Any

import redis
from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from core.exceptions import ApplicationError

logger = logging.getLogger(__name__)

# While PostgreSQL or Redis is unreachable (restart, failover), clients get a 503 asking them to retry shortly.
UNAVAILABLE_RETRY_AFTER_SECONDS = 5


def error_body(*, code: str, message: str, fields: dict[str, list[str]] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "fields": fields or {}}}


def field_errors_flatten(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """DRF nests errors by field, list index and child field; flatten to dotted paths like `messages.3.role` (the
    API's error bodies, the tools' errors)."""
    if isinstance(detail, dict):
        flat: dict[str, list[str]] = {}
        for key, value in detail.items():
            name = "" if key == "non_field_errors" else str(key)  # a list's own errors belong to the list
            path = f"{prefix}.{name}" if prefix and name else (prefix or name)
            flat.update(field_errors_flatten(value, path))
        return flat
    if isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            return {prefix or "non_field_errors": [str(item) for item in detail]}
        flat = {}
        for index, item in enumerate(detail):
            flat.update(field_errors_flatten(item, f"{prefix}.{index}" if prefix else str(index)))
        return flat
    return {prefix or "non_field_errors": [str(detail)]}


def _service_unavailable(exc: Exception, *, code: str, what: str) -> Response:
    logger.warning("%s unavailable: %s: %s", what, type(exc).__name__, exc)
    return Response(
        error_body(code=code, message=f"{what} is unavailable; retry shortly."),
        status=status.HTTP_503_SERVICE_UNAVAILABLE,
        headers={"Retry-After": str(UNAVAILABLE_RETRY_AFTER_SECONDS)},
    )


def api_exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, ApplicationError):
        return Response(error_body(code=exc.code, message=exc.message, fields=exc.fields), status=exc.status_code)
    if isinstance(exc, RequestDataTooBig):
        return Response(
            error_body(
                code="request_too_large",
                message=f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes.",
            ),
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    # Connection-level failures are transient (a restart, a failover): a 503 the client can retry, not a 500.
    if isinstance(exc, OperationalError | InterfaceError):
        return _service_unavailable(exc, code="database_unavailable", what="The database")
    if isinstance(exc, redis.ConnectionError | redis.TimeoutError):
        return _service_unavailable(exc, code="cache_unavailable", what="The cache")
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()

    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        fields = field_errors_flatten(exc.detail)
        named = ", ".join(name for name in fields if name != "non_field_errors")
        message = f"Invalid input: {named}." if named else "; ".join(fields.get("non_field_errors", ["Invalid input."]))
        response.data = error_body(code="invalid", message=message, fields=fields)
    else:
        detail = exc.detail if isinstance(exc, exceptions.APIException) else str(exc)
        code = getattr(exc, "default_code", "error")
        response.data = error_body(code=str(code), message=str(detail), fields=getattr(exc, "fields", None))
    return response


def is_api_path(path: str) -> bool:
    return path.startswith(("/api/", "/v1/"))


def not_found_response() -> JsonResponse:
    return JsonResponse(error_body(code="not_found", message="Not found."), status=status.HTTP_404_NOT_FOUND)


def not_found_handler(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """JSON in the one error shape for API paths; Django's page for the admin and operator pages."""
    if is_api_path(request.path):
        return not_found_response()
    return defaults.page_not_found(request, exception)


def server_error_handler(request: HttpRequest) -> HttpResponse:
    if is_api_path(request.path):
        return JsonResponse(
            error_body(code="server_error", message="Internal server error."),
            status=status.HTTP_500_INTERNAL_SERVER_ERROR,
        )
    return defaults.server_error(request)
