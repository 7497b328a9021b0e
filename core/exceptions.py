"""Domain errors. Services raise these; the API error handler renders them in the one error format."""

from __future__ import annotations


class ApplicationError(Exception):
    status_code = 400
    code = "invalid"

    def __init__(self, message: str, *, fields: dict[str, list[str]] | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields or {}
        if code:
            self.code = code


class NotFoundError(ApplicationError):
    status_code = 404
    code = "not_found"


class ConflictError(ApplicationError):
    status_code = 409
    code = "conflict"


class ProviderError(Exception):
    """An embedding or LLM provider failed (network, timeout, 5xx, wrong shape). Tasks retry these."""


class ProviderRateLimited(ProviderError):
    """The provider said 429, or the client-side rate limit would make the caller wait past its deadline.
    `retry_after`: seconds before trying again (the provider's Retry-After when it sent one)."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ProviderPaused(ProviderError):
    """The circuit breaker is open: the provider failed repeatedly and is not called for `retry_in` seconds."""

    def __init__(self, message: str, *, retry_in: float) -> None:
        super().__init__(message)
        self.retry_in = retry_in
