"""Formation on request (the form_memories command, operators): run it in this process or queue it."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from conversations.models import Session
from formation.models import FormationJob
from formation.services.formation import SessionLocked, session_form_memories
from formation.services.formation_triggers import formation_request

EXPLICIT = FormationJob.Trigger.EXPLICIT


@dataclass
class SessionFormationResult:
    session: Session
    outcome: str  # formed, queued, busy (another worker has it), waiting (budget or provider), failed
    runs: int = 0
    messages: int = 0
    facts_added: int = 0
    facts_updated: int = 0
    facts_deleted: int = 0
    reflections_added: int = 0
    error: str = ""


def _form_now(session: Session) -> SessionFormationResult:
    """Run formation until nothing is left after the cursor (one run covers a token budget of messages)."""
    result = SessionFormationResult(session=session, outcome="formed")
    while True:
        try:
            outcome = session_form_memories(session_id=session.pk, trigger=EXPLICIT)
        except SessionLocked:
            time.sleep(0.2)  # an append holds the row for milliseconds
            continue
        except Exception as error:  # recorded on the failed FormationJob; the other sessions still run
            result.outcome, result.error = "failed", f"{type(error).__name__}: {error}"
            return result
        if outcome is None:
            session.refresh_from_db(fields=["formation_status", "formation_waiting_reason"])
            if session.formation_status == Session.FormationStatus.WAITING:
                result.outcome = "waiting"
            elif result.runs == 0:
                result.outcome = "busy"
            return result
        job = outcome.job
        result.runs += 1
        result.messages += job.message_count
        result.facts_added += job.facts_added
        result.facts_updated += job.facts_updated
        result.facts_deleted += job.facts_deleted
        result.reflections_added += job.reflections_added
        if not outcome.more_pending:
            return result


def sessions_form_memories(*, sessions: Iterable[Session], queue: bool) -> list[SessionFormationResult]:
    """Form memory for each session now, or queue it for the workers (a session already queued or running is
    left to the worker that has it). Consolidations that formation makes due are queued either way."""
    results = []
    for session in sessions:
        if queue:
            queued = formation_request(session=session, trigger=EXPLICIT)
            results.append(SessionFormationResult(session=session, outcome="queued" if queued else "busy"))
        else:
            results.append(_form_now(session))
    return results
