"""Logging filters of the one console handler (settings.LOGGING): every line carries the request id (web) or the
Celery task id (workers; FormationJob.task_id and the admin's job pages show the same id), and secrets are
redacted from messages and tracebacks whatever logged them (our code, Django, the openai SDK, httpx)."""

from __future__ import annotations

import contextvars
import logging
import re

from django.conf import settings

current_request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("current_request_id", default=None)

REDACTED = "[redacted]"
_SECRET_PATTERNS = [
    # API keys of this service (agents.services.api_keys.KEY_PREFIX) and OpenAI-style keys.
    re.compile(r"\bmem_[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{12,}"),
    # Credentials in headers, query strings, dicts and reprs: keep the name, hide the value.
    re.compile(r"(?i)\b((?:bearer|basic)\s+)[A-Za-z0-9_\-.~+/=]{8,}"),
    re.compile(
        r"(?i)((?:authorization|x[-_]api[-_]key|api[-_]?key|password|passwd|secret|token)[\"']?\s*[:=]\s*[\"']?)"
        r"(?!\[redacted\])[^\s\"',;}&]+"
    ),
    # Passwords inside connection URLs: postgres://user:password@host
    re.compile(r"(?i)(\b[a-z][a-z0-9+.\-]*://[^:/@\s]+:)[^@\s/]+(@)"),
]


def _configured_secrets() -> list[str]:
    names = ("LLM_API_KEY", "EMBEDDING_API_KEY", "SECRET_KEY")
    return [value for name in names if len(value := str(getattr(settings, name, "") or "")) >= 8]


def secrets_redact(text: str) -> str:
    for secret in _configured_secrets():
        text = text.replace(secret, REDACTED)
    for pattern in _SECRET_PATTERNS:
        if pattern.groups == 2:
            text = pattern.sub(lambda match: f"{match.group(1)}{REDACTED}{match.group(2)}", text)
        elif pattern.groups == 1:
            text = pattern.sub(lambda match: f"{match.group(1)}{REDACTED}", text)
        else:
            text = pattern.sub(REDACTED, text)
    return text


class SecretRedactionFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record is logged as it is rather than dropped
            return True
        record.msg, record.args = secrets_redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = secrets_redact(record.exc_text)
        return True


def _celery_task_id() -> str | None:
    from celery import current_task  # logging is configured before Celery loads: imported when a record is made

    return getattr(current_task.request, "id", None) if current_task else None


class RequestIdFilter(logging.Filter):
    """Adds `record.request_id`: the HTTP request's id, else `task:<celery task id>`, else '-'."""

    def filter(self, record: logging.LogRecord) -> bool:
        request_id = current_request_id.get()
        if request_id is None and (task_id := _celery_task_id()):
            request_id = f"task:{task_id}"
        record.request_id = request_id or "-"
        return True
