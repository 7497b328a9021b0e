"""Reflections and blobs written by hand through the API: the caller's input is checked against the same limits
formation keeps (reflection and blob word limits) and refused, never silently cut, when over them."""

from __future__ import annotations

from django.conf import settings

from agents.models import Agent, EndUser
from agents.selectors.agent_settings import agent_thresholds
from conversations.models import Session
from core.exceptions import ApplicationError, ConflictError
from reflections.models import ConsolidatedMemory, Reflection
from reflections.services.consolidation import consolidated_memory_replace
from reflections.services.reflections import reflection_create


def _within_limits(*, content: str, word_limit: int, char_limit: int, what: str) -> None:
    if len(content) > char_limit:
        raise ApplicationError(
            f"{what} has {len(content)} characters; the limit is {char_limit}.",
            fields={"content": [f"more than {char_limit} characters"]},
        )
    words = len(content.split())
    if words > word_limit:
        raise ApplicationError(
            f"{what} has {words} words; the limit is {word_limit}.",
            fields={"content": [f"more than {word_limit} words"]},
        )


def reflection_create_manual(
    *, agent: Agent, scope: str, content: str, user: EndUser | None = None, session: Session | None = None
) -> Reflection:
    """A reflection added by hand (source manual): buffered like formed ones, in context until consolidated."""
    _within_limits(
        content=content,
        word_limit=settings.REFLECTION_MAX_WORDS,
        char_limit=settings.REFLECTION_MAX_CHARS,
        what="a reflection",
    )
    return reflection_create(
        agent=agent, scope=scope, content=content, user=user, session=session, source=Reflection.Source.MANUAL
    )


def reflection_delete(*, reflection: Reflection) -> None:
    """Remove a reflection for good: from the buffer (and so from the context block, whose cache the delete
    invalidates), or, once absorbed, from the record of what a blob absorbed; the blob's text is not changed (edit
    the blob for that)."""
    reflection.delete()


def consolidated_memory_edit(
    *, memory: ConsolidatedMemory, content: str, reason: str, expected_version: int | None = None
) -> ConsolidatedMemory:
    """Replace a blob's text by hand: the previous text becomes a past version, the version goes up by one and the
    scope's context blocks are invalidated. With expected_version, an edit racing another change is refused."""
    if expected_version is not None and expected_version != memory.version:
        raise ConflictError(
            f"the blob is at version {memory.version}, not {expected_version}: read it again, then edit.",
            fields={"expected_version": ["stale"]},
        )
    _within_limits(
        content=content,
        word_limit=agent_thresholds(agent=memory.agent).blob_word_limit(memory.scope),
        char_limit=settings.BLOB_MAX_CHARS,
        what="the blob",
    )
    return consolidated_memory_replace(
        agent=memory.agent,
        scope=memory.scope,
        user=memory.user,
        session=memory.session,
        content=content,
        reason=reason,
        expected_version=expected_version,
        curated=True,
    )
