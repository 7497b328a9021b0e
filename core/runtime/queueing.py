"""Enqueueing background work from request code without ever failing the request."""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from typing import Any

from celery import current_app

from core.exceptions import ProviderRateLimited

logger = logging.getLogger(__name__)
# One thread per process does the best-effort bookkeeping a read asks for, so the read's response never waits on the
# broker. Created lazily (the thread starts on the first submit), so forking servers start clean.
_background_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="background")


# While the broker is down an enqueue must fail fast: a short publish retry, and no result backend subscription
# (nothing reads these results), whose reconnect loop alone held a request for ~20 s per enqueue.
ENQUEUE_OPTIONS: dict[str, Any] = {
    "ignore_result": True,
    "retry_policy": {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5},
}


def task_enqueue_safely(task_name: str, *args: object) -> bool:
    """Queue the task registered as `task_name` (each app's task_names.py) with args; when the broker is down, log
    and return False. Callers keep enough state (a 'queued' session, a fact without a vector) for a periodic sweep to
    redo the work once the broker is back. By name, so that services queue tasks without importing the tasks
    modules that import them."""
    try:
        # send_task needs no registered task object: a web process never imports the tasks modules.
        current_app.send_task(task_name, args=args, **ENQUEUE_OPTIONS)
    except Exception:
        logger.warning("could not enqueue %s%s; a sweep will retry", task_name, args, exc_info=True)
        return False
    return True


def retry_backoff_seconds(retries: int, error: BaseException | None = None) -> float:
    """How long a task waits before its next retry: exponential backoff with full jitter, capped at ten minutes; never
    sooner than a 429's Retry-After."""
    delay = random.uniform(0, min(600, 5 * 2**retries))
    if isinstance(error, ProviderRateLimited) and error.retry_after:
        delay = max(delay, error.retry_after)
    return delay


def call_in_background(function: Callable[..., object], *args: object, what: str) -> None:
    """Call function(*args) on this process's background thread: for best-effort bookkeeping of reads (access
    counts), whose request must not wait on Redis or the broker, nor fail or slow down while they are away. A
    process that exits first loses the call, as an outage would."""

    def call() -> None:
        try:
            function(*args)
        except Exception:
            logger.warning("%s failed", what, exc_info=True)

    # In a copy of the caller's context: the call's log lines name the request that asked for it.
    _background_thread.submit(copy_context().run, call)
