"""Conversations in the admin: sessions and messages."""

from conversations.admin.sessions import MessageAdmin, SessionAdmin

__all__ = ["MessageAdmin", "SessionAdmin"]
