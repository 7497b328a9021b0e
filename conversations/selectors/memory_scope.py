"""Which end user and session a memory read is about, from the external ids an agent passes."""

from __future__ import annotations

import copy
from dataclasses import dataclass

from agents.models import Agent, EndUser
from conversations.models import Session
from core.exceptions import ApplicationError
from core.runtime.request_path_cache import ProcessCache

# End users by (agent id, external id); invalidated by agents/signals.py and the erasure.
_end_users: ProcessCache[EndUser] = ProcessCache(max_entries=10_000)


@dataclass(frozen=True)
class MemoryScopeTarget:
    user: EndUser | None
    session: Session | None


def memory_scope_resolve(
    *, agent: Agent, user_external_id: str | None, session_external_id: str | None
) -> MemoryScopeTarget:
    """Reads never create rows: an id the agent has not used yet simply has no memory (None). A session names its
    user, so `user` may be left out; naming a different user than the session's is a client error."""
    user = _end_user_find(agent=agent, external_id=user_external_id) if user_external_id else None
    session = None
    if session_external_id:
        session = Session.objects.select_related("user").filter(agent=agent, external_id=session_external_id).first()
    if session is not None:
        if user_external_id and session.user.external_id != user_external_id:
            raise ApplicationError(
                f"session {session_external_id!r} belongs to another user than {user_external_id!r}.",
                fields={"session": ["belongs to another user"]},
            )
        user = session.user
    return MemoryScopeTarget(user=user, session=session)


def _end_user_find(*, agent: Agent, external_id: str) -> EndUser | None:
    user = _end_users.get_or_load(
        key=(agent.pk, external_id), load=lambda: EndUser.objects.filter(agent=agent, external_id=external_id).first()
    )
    return copy.copy(user) if user is not None else None
