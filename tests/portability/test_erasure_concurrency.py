"""Erasing a user while appends to their sessions are in flight: both take the session's row before the user's, so
neither is aborted as a deadlock (before, erasure locked the user first, and an append that had locked its session
and waited for the user deadlocked with it as soon as erasure reached the sessions)."""

from __future__ import annotations

import threading

import pytest
from django.db import OperationalError, connection

from agents.models import EndUser
from conversations.services.ingestion import MessageInput, session_append_messages
from portability.services.erasure import user_erase

SESSIONS = 4
ROUNDS = 6
APPENDERS = 4


def _append(agent, user: str, session: str, n: int) -> None:
    session_append_messages(
        agent=agent,
        user_external_id=user,
        session_external_id=session,
        messages=[MessageInput(role="user", content=f"Message {n} about the garden and the bees.")],
    )


@pytest.mark.django_db(transaction=True)
def test_erasure_and_appends_to_the_user_s_sessions_never_deadlock(agent):
    errors: list[BaseException] = []
    appended = 0

    for round_number in range(ROUNDS):
        user = f"gardener-{round_number}"
        for number in range(SESSIONS):  # enough rows that the erasure holds its locks a while
            session_append_messages(
                agent=agent,
                user_external_id=user,
                session_external_id=f"{user}-s{number}",
                messages=[MessageInput(role="user", content=f"Note {k} on roses.") for k in range(150)],
            )
        start, stop = threading.Barrier(APPENDERS + 1), threading.Event()

        def appender(index: int, user: str = user, start: threading.Barrier = start, stop=stop) -> None:
            nonlocal appended
            try:
                start.wait()
                n = 0
                while not stop.is_set():
                    _append(agent, user, f"{user}-s{(index + n) % SESSIONS}", n)
                    appended += 1
                    n += 1
            except BaseException as error:  # collected and asserted on below
                errors.append(error)
            finally:
                connection.close()

        threads = [threading.Thread(target=appender, args=(index,)) for index in range(APPENDERS)]
        for thread in threads:
            thread.start()
        start.wait()
        try:
            user_erase(user=EndUser.objects.get(agent=agent, external_id=user), requested_by="test")
        except OperationalError as error:
            errors.append(error)
        finally:
            stop.set()
            for thread in threads:
                thread.join(60)

    assert not [error for error in errors if "deadlock" in str(error).lower()], errors
    assert errors == []
    assert appended > 0
