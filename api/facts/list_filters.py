"""What the facts endpoints' list views share: the user a list is filtered by."""

from __future__ import annotations

from agents.models import Agent, EndUser
from conversations.selectors.memory_scope import memory_scope_resolve


class UnknownListUser(Exception):
    """The list is filtered by a user memory holds nothing of: it is empty, not an error."""


def list_filter_user(*, agent: Agent, filters: dict) -> EndUser | None:
    """The user of a validated `user` filter (None when the list is not filtered by user); UnknownListUser when the
    agent has never seen that user."""
    if "user" not in filters:
        return None
    user = memory_scope_resolve(agent=agent, user_external_id=filters["user"], session_external_id=None).user
    if user is None:
        raise UnknownListUser
    return user
