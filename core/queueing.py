"""Enqueueing background work from request code without ever failing the request."""

from __future__ import annotations

import logging

logger = logging.getLogger(__name__)


def task_enqueue_safely(task, *args) -> bool:
    """Queue task(*args); when the broker is down, log and return False. Callers keep enough state (a 'queued'
    session, a fact without a vector) for a periodic sweep to redo the work once the broker is back."""
    try:
        task.delay(*args)
    except Exception:
        logger.warning("could not enqueue %s%s; a sweep will retry", task.name, args, exc_info=True)
        return False
    return True
