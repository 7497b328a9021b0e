"""Structured logs, and the log context that follows work across threads and processes.

- LOG_FORMAT=json: `JsonFormatter` writes one JSON object per line (time, level, logger, message, request_id, agent,
  task_id, task_name, and a traceback as exc_info), after the same secret redaction as plain text.
- A task queued while a request is handled carries the request's id and agent in its message headers
  (`request_context_to_task_headers`, Celery's before_task_publish); the worker restores them for the task's run
  (`request_context_from_task_headers`, task_prerun), so a request's lines and those of the work it queued share the
  request id. Threads started for a request (the query-embedding pool, the background bookkeeping thread) run in a
  copy of the request's context (core.runtime.timing.in_request_context), and so log its id too."""

from __future__ import annotations

import logging
from contextvars import Token
from typing import Any

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter as _JsonFormatter

from core.runtime.logging import current_agent, current_request_id

REQUEST_ID_HEADER = "memory_request_id"
AGENT_HEADER = "memory_agent"


class JsonFormatter(_JsonFormatter):
    """One JSON object per record, with the fields of core.runtime.logging.RequestIdFilter."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            ["levelname", "name", "message", "request_id", "agent", "task_id", "task_name"],
            rename_fields={"levelname": "level", "name": "logger"},
            timestamp="time",
            reserved_attrs=[*RESERVED_ATTRS, "log_ids"],
            **kwargs,
        )

    def format(self, record: logging.LogRecord) -> str:
        if record.exc_info and record.exc_text:
            # The redaction filter left the traceback's redacted text in exc_text: that is what is written.
            record = logging.makeLogRecord(record.__dict__ | {"exc_info": None})
        return super().format(record)


def request_context_to_task_headers(headers: dict | None = None, **_: Any) -> None:
    """before_task_publish: the publishing request's id and agent go with the task."""
    if headers is None:
        return
    request_id, agent = current_request_id.get(), current_agent.get()
    if request_id and REQUEST_ID_HEADER not in headers:
        headers[REQUEST_ID_HEADER] = request_id
    if agent and AGENT_HEADER not in headers:
        headers[AGENT_HEADER] = agent


_task_tokens: dict[str, tuple[Token, Token]] = {}


def _task_header(task: Any, name: str) -> str | None:
    request = task.request
    value = getattr(request, name, None)
    if value is None and isinstance(getattr(request, "headers", None), dict):
        value = request.headers.get(name)
    return value if isinstance(value, str) else None


def request_context_from_task_headers(task_id: str | None = None, task: Any = None, **_: Any) -> None:
    """task_prerun: the task's run logs the id and agent of the request that queued it (none for beat's tasks)."""
    if task is None or task_id is None:
        return
    _task_tokens[task_id] = (
        current_request_id.set(_task_header(task, REQUEST_ID_HEADER)),
        current_agent.set(_task_header(task, AGENT_HEADER)),
    )


def request_context_clear(task_id: str | None = None, **_: Any) -> None:
    """task_postrun: the next task on this thread starts without the last one's request."""
    tokens = _task_tokens.pop(task_id, None) if task_id else None
    if tokens is not None:
        request_token, agent_token = tokens
        try:
            current_request_id.reset(request_token)
            current_agent.reset(agent_token)
        except ValueError:  # set in another context (a pool that ran prerun elsewhere): clear instead
            current_request_id.set(None)
            current_agent.set(None)
