"""What the tests of changes in the world share (tests/facts/test_world_changes.py, test_cessation.py): a user's
message said on one day, and a reconciliation model that adds every new fact, so that what ends an old statement is
the rule under test, never the model's answer."""

from __future__ import annotations

from datetime import UTC, datetime

from conversations.models import Session
from conversations.services.ingestion import MessageInput, session_append_messages

SAID = datetime(2026, 11, 23, 10, tzinfo=UTC)


def said_by_the_user(agent, text: str) -> Session:
    """The session of user u1 in which they said `text` at SAID."""
    return session_append_messages(
        agent=agent,
        user_external_id="u1",
        session_external_id="s1",
        messages=[MessageInput(role="user", content=text, created_at=SAID)],
    ).session


def add_every_new_fact(request) -> dict:
    """The reconciliation reply that adds every new fact of the request."""
    count = len(request.inputs["new_facts"])
    return {
        "decisions": [
            {"new": number, "action": "ADD", "target": None, "content": None, "reason": "new"}
            for number in range(1, count + 1)
        ]
    }
