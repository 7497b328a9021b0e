"""Periodic tasks' routine lines go to DEBUG (core.runtime.logging.IdlePeriodicTaskFilter): beat sending them, a
periodic task received, and one that reports having done nothing; what did something, or any other task, stays."""

from __future__ import annotations

import logging

import pytest

from core.runtime.logging import IdlePeriodicTaskFilter


def _record(logger: str, message: str, args: object) -> logging.LogRecord:
    return logging.LogRecord(logger, logging.INFO, __file__, 1, message, args, None)  # type: ignore[arg-type]


def _trace(name: str, result: str) -> logging.LogRecord:
    arguments = {"id": "1", "name": name, "return_value": result, "runtime": 0.01, "args": "()", "kwargs": "{}"}
    return _record("celery.app.trace", "Task %(name)s[%(id)s] succeeded in %(runtime)ss: %(return_value)s", arguments)


@pytest.mark.parametrize(
    ("record", "shown"),
    [
        (
            _record("celery.beat", "Scheduler: Sending due task %s (%s)", ("facts-access-fold", "facts.fold_accesses")),
            False,
        ),
        (
            _record(
                "celery.worker.strategy", "Task %(name)s[%(id)s] received", {"id": "1", "name": "facts.fold_accesses"}
            ),
            False,
        ),
        (_trace("facts.fold_accesses", "0"), False),
        (_trace("formation.resume_formation", "{'provider': 0, 'budget': 0, 'consolidations': 0}"), False),
        (_trace("formation.sweep_formation", "{'cold': 2, 'retried': 0, 'messages_to_embed': 0}"), True),
        (_trace("facts.fold_accesses", "12"), True),
        (_trace("formation.form_session_memories", "None"), True),  # not periodic: always shown
        (
            _record("celery.worker.strategy", "Task %(name)s[%(id)s] received", {"id": "1", "name": "facts.reembed"}),
            True,
        ),
    ],
)
def test_idle_periodic_lines_are_debug_and_the_rest_is_shown(record, shown):
    assert IdlePeriodicTaskFilter().filter(record) is shown
    assert record.levelno == (logging.INFO if shown else logging.DEBUG)
