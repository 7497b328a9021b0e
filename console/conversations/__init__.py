"""Conversations in the admin: sessions and messages."""

from console.conversations.sessions import MessageAdmin, SessionAdmin

__all__ = ["MessageAdmin", "SessionAdmin"]
