"""Conversations in the admin, one module per model: agents (with the memory inspector and the formation page),
API keys, end users, sessions and messages, jobs (formation, retention), held memory (the review queue)."""

from conversations.admin.agents import AgentAdmin
from conversations.admin.api_keys import AgentAPIKeyAdmin
from conversations.admin.end_users import EndUserAdmin
from conversations.admin.held_memory import HeldMemoryAdmin
from conversations.admin.jobs import FormationJobAdmin, RetentionRunAdmin
from conversations.admin.sessions import MessageAdmin, SessionAdmin

__all__ = [
    "AgentAPIKeyAdmin",
    "AgentAdmin",
    "EndUserAdmin",
    "FormationJobAdmin",
    "HeldMemoryAdmin",
    "MessageAdmin",
    "RetentionRunAdmin",
    "SessionAdmin",
]
