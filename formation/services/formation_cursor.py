"""The formation cursor of a session (the last message formation has covered) set by other means than a formation
run: messages imported as already formed, and a native import restoring the cursor it exported. Formation's columns
on the session are written by formation's services only (tests/test_architecture.py)."""

from __future__ import annotations

from django.db.models import Max

from conversations.models import Message, Session


def session_cursor_past_imported(*, session: Session, imported: list[Message]) -> None:
    """Imported conversations count as formed: a session formed up to its last message before the import stays formed
    through the last imported one. The caller holds the session's row lock."""
    if not imported:
        return
    before = Message.objects.filter(session=session, pk__lt=imported[0].pk).aggregate(last=Max("pk"))["last"] or 0
    if (session.formed_through_message_id or 0) >= before:
        session.formed_through_message_id = imported[-1].pk
        session.save(update_fields=["formed_through_message_id"])


def session_cursor_restore(*, session_id: int, formed_through_message_id: int) -> None:
    """A native import's session formed as far as it was when exported (the cursor remapped to the new message ids)."""
    Session.objects.filter(pk=session_id).update(formed_through_message_id=formed_through_message_id)
