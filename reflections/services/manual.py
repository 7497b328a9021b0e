"""Reflections and blobs written by hand through the API: the caller's input is checked against the same limits
formation keeps (reflection and blob word limits) and refused, never silently cut, when over them."""

from __future__ import annotations

from django.conf import settings

from conversations.models import Agent, EndUser, Session
from conversations.selectors.agent_settings import agent_thresholds
from core.exceptions import ApplicationError, ConflictError
from reflections.models import ConsolidatedMemory, Reflection
from reflections.services.consolidation import consolidated_memory_replace
from reflections.services.reflections import reflection_create


def _words_within(*, content: str, limit: int, what: str) -> None:
    words = len(content.split())
    if words > limit:
        raise ApplicationError(
            f"{what} has {words} words; the limit is {limit}.", fields={"content": [f"more than {limit} words"]}
        )


def reflection_create_manual(
    *, agent: Agent, scope: str, content: str, user: EndUser | None = None, session: Session | None = None
) -> Reflection:
    """A reflection added by hand (source manual): buffered like formed ones, in context until consolidated."""
    _words_within(content=content, limit=settings.REFLECTION_MAX_WORDS, what="a reflection")
    return reflection_create(
        agent=agent, scope=scope, content=content, user=user, session=session, source=Reflection.Source.MANUAL
    )


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
    _words_within(
        content=content, limit=agent_thresholds(agent=memory.agent).blob_word_limit(memory.scope), what="the blob"
    )
    return consolidated_memory_replace(
        agent=memory.agent,
        scope=memory.scope,
        user=memory.user,
        session=memory.session,
        content=content,
        reason=reason,
        expected_version=expected_version,
    )
