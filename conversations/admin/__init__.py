"""Conversations in the admin, one module per model: sessions and messages, jobs (formation, retention), held memory
(the review queue)."""

from conversations.admin.held_memory import HeldMemoryAdmin
from conversations.admin.jobs import FormationJobAdmin, RetentionRunAdmin
from conversations.admin.sessions import MessageAdmin, SessionAdmin

__all__ = [
    "FormationJobAdmin",
    "HeldMemoryAdmin",
    "MessageAdmin",
    "RetentionRunAdmin",
    "SessionAdmin",
]
