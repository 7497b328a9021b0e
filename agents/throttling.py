"""Per-key request throttling of the API (API_THROTTLE_RATE), counted in Redis so that all web processes share it.
A throttled request gets 429 `throttled` with Retry-After (seconds until the window ends)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from agents.models import AgentAPIKey, OperatorKey
from core.runtime.ratelimit import rate_parse, window_hit, window_retry_after

# For the annotations only: imported while DRF reads its settings, rest_framework.views would be circular.
if TYPE_CHECKING:
    from rest_framework.views import APIView


class AgentKeyRateThrottle(BaseThrottle):
    """One budget per API key or operator key (a staff login: per user). Unauthenticated requests never get this far:
    they are refused (401) before throttles run."""

    def __init__(self) -> None:
        self._retry_after: int | None = None

    @staticmethod
    def identity(request: Request) -> str | None:
        if isinstance(request.auth, AgentAPIKey):
            return f"api-key:{request.auth.pk}"
        if isinstance(request.auth, OperatorKey):
            return f"operator-key:{request.auth.pk}"
        if request.user and request.user.is_authenticated and request.user.pk is not None:
            return f"staff-user:{request.user.pk}"
        return None

    def allow_request(self, request: Request, view: APIView | None) -> bool:
        rate = rate_parse(settings.API_THROTTLE_RATE)
        identity = self.identity(request)
        if rate is None or identity is None:
            return True
        if window_hit(identity, rate.period_seconds) <= rate.limit:
            return True
        self._retry_after = window_retry_after(rate.period_seconds)
        return False

    def wait(self) -> int | None:
        return self._retry_after
