"""Helpers for the formation tests: a user saying something and a formation run in this process, and for those that
run real processes, bounded waits and pausing the session's worker. The local OpenAI-compatible LLM server they talk
to is tests/llm_stub_server.py."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

import pytest

from conversations.services.ingestion import MessageInput, session_append_messages
from formation.services.formation import session_form_memories

T = TypeVar("T")


def wait_until(condition: Callable[[], T], *, timeout: float, what: str, process: subprocess.Popen | None = None) -> T:
    """Poll condition() until it returns something truthy; fail the test after `timeout` seconds, or at once when
    the process the wait depends on has exited."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if process is not None and process.poll() is not None:
            pytest.fail(f"the worker exited (code {process.returncode}) while waiting for {what}")
        if time.monotonic() > deadline:
            pytest.fail(f"gave up after {timeout:.0f}s waiting for {what}")
        time.sleep(0.2)


@contextlib.contextmanager
def celery_workers_paused(queues: tuple[str, ...] = ("celery", "formation")) -> Iterator[list[str]]:
    """Workers already running (e.g. the session-wide offline one) stop consuming `queues` until the block ends, so
    that the workers a test starts itself are the only ones to take those queues' tasks."""
    from memory_project.celery import app

    others = sorted({name for reply in app.control.ping(timeout=1.0) for name in reply})
    for queue in queues if others else ():
        app.control.cancel_consumer(queue, destination=others, reply=True, timeout=5.0)
    try:
        yield others
    finally:
        for queue in queues if others else ():
            app.control.add_consumer(queue, destination=others, reply=True, timeout=5.0)


def user_says(agent, text: str, *, user: str = "u1", session: str = "s1"):
    """One user message appended to the session (created on first use), as the API stores it."""
    return session_append_messages(
        agent=agent,
        user_external_id=user,
        session_external_id=session,
        messages=[MessageInput(role="user", content=text)],
    ).session


def formation_run(session):
    """One explicit formation run of the session, in this process (its LLM is whatever the test put in place)."""
    return session_form_memories(session_id=session.pk, trigger="explicit").job
