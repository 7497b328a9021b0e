"""Logging filters of the one console handler (settings.LOGGING): every line carries the request id (web), the Celery
task id (workers; FormationJob.task_id and the admin's job pages show the same id) and, in a task a request queued,
that request's id too (core.observability.log_context carries it in the task's headers), and the agent acted for;
secrets are redacted from messages and tracebacks whatever logged them (our code, Django, the openai SDK, httpx).
LOG_FORMAT=json writes each record as one JSON object (core.observability.log_context.JsonFormatter)."""

from __future__ import annotations

import ast
import contextvars
import logging
import re

from django.conf import settings

current_request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("current_request_id", default=None)
# The external id of the agent a request or task acts for (set once the API knows it).
current_agent: contextvars.ContextVar[str | None] = contextvars.ContextVar("current_agent", default=None)

REDACTED = "[redacted]"
_SECRET_PATTERNS = [
    # API keys and operator keys of this service, webhook secrets, and OpenAI-style keys.
    re.compile(r"\bmem_[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bmop_[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bwhsec_[A-Za-z0-9+/=]{8,}"),
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
    names = ("LLM_API_KEY", "EMBEDDING_API_KEY", "RERANK_API_KEY", "SECRET_KEY")
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


def _celery_task() -> tuple[str | None, str | None]:
    from celery import current_task  # logging is configured before Celery loads: imported when a record is made

    if not current_task:
        return None, None
    return getattr(current_task.request, "id", None), getattr(current_task, "name", None)


class RequestIdFilter(logging.Filter):
    """Adds to each record `request_id` (the HTTP request's id, in a task the id of the request that queued it; else
    None), `task_id` and `task_name` (in a Celery task; else None), `agent` (the agent's external id, else None) and
    `log_ids`, what the plain format shows: `<request id>`, `task:<task id>`, both, or '-'."""

    def filter(self, record: logging.LogRecord) -> bool:
        request_id, agent = current_request_id.get(), current_agent.get()
        # Django logs a 4xx or 5xx response after the middleware is done, with the request in the record.
        request = getattr(record, "request", None)
        if request_id is None and request is not None:
            request_id, agent = getattr(request, "request_id", None), getattr(request, "agent_external_id", None)
        task_id, task_name = _celery_task()
        record.request_id, record.task_id, record.task_name = request_id, task_id, task_name
        record.agent = agent
        ids = [request_id] if request_id else []
        if task_id:
            ids.append(f"task:{task_id}")
        record.log_ids = " ".join(ids) or "-"
        return True


def _did_nothing(value: object) -> bool:
    """A task's result that reports no work: 0, None, empty, or counts that are all zero."""
    if isinstance(value, dict):
        return all(_did_nothing(item) for item in value.values())
    if isinstance(value, list | tuple):
        return all(_did_nothing(item) for item in value)
    return not value


def _result_did_nothing(result_repr: object) -> bool:
    try:
        return _did_nothing(ast.literal_eval(str(result_repr)))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return False  # a result too long for Celery to show whole, or not a literal: it did something


class IdlePeriodicTaskFilter(logging.Filter):
    """The periodic tasks' routine lines go to DEBUG, so that a console at INFO shows work, not the clock: beat's
    "Sending due task", a periodic task's "received", and its "succeeded" when its result reports nothing done
    (the beat jobs return what they did: counts, or a dict of them). The same for the tasks of LOG_ROUTINE_TASKS,
    queued by something other than beat but as often finding nothing. A task that did something, failed or was
    retried still logs at INFO and above."""

    def __init__(self, name: str = "") -> None:
        super().__init__(name)
        self._periodic: frozenset[str] = frozenset()

    def _periodic_tasks(self) -> frozenset[str]:
        if not self._periodic:
            # Imported here: core names no app, and the Celery app is the project's, configured once it loads.
            from celery import current_app

            scheduled = {entry["task"] for entry in current_app.conf.beat_schedule.values()}
            self._periodic = frozenset(scheduled | set(settings.LOG_ROUTINE_TASKS))
        return self._periodic

    def _routine(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO:
            return False
        if record.name == "celery.beat":
            return str(record.msg).startswith("Scheduler: Sending due task")
        if record.name not in ("celery.worker.strategy", "celery.app.trace") or not isinstance(record.args, dict):
            return False
        if record.args.get("name") not in self._periodic_tasks():
            return False
        return record.name == "celery.worker.strategy" or (
            "return_value" in record.args and _result_did_nothing(record.args["return_value"])
        )

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._routine(record):
            return True
        record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return logging.getLogger().isEnabledFor(logging.DEBUG)
