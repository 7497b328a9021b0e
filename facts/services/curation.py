"""Facts written by hand, through the facts API and the memory tools: the checks a caller's input needs before
facts.services.facts stores it (word limit, duplicates, closed versions, racing writers), with errors naming the
field."""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from django.db import IntegrityError, transaction

from agents.models import Agent, EndUser
from conversations.models import Session
from core.exceptions import ApplicationError, ConflictError
from facts.models import Fact, FactScope
from facts.services.facts import (
    fact_close,
    fact_content_hash,
    fact_create,
    fact_profile_set,
    fact_scopes_validate,
    fact_supersede,
)
from facts.world_time import UNKNOWN_WORLD_TIME, WorldTime


def _content_validate(content: str) -> None:
    words = len(content.split())
    if not words:
        raise ApplicationError("content must not be empty.", fields={"content": ["empty"]})
    if len(content) > settings.FACT_MAX_CHARS:
        raise ApplicationError(
            f"a fact is at most {settings.FACT_MAX_CHARS} characters; this one has {len(content)}.",
            fields={"content": [f"more than {settings.FACT_MAX_CHARS} characters"]},
        )
    if words > settings.FACT_MAX_WORDS:
        raise ApplicationError(
            f"a fact is one atomic statement of at most {settings.FACT_MAX_WORDS} words; this one has {words}.",
            fields={"content": [f"more than {settings.FACT_MAX_WORDS} words"]},
        )


def _current_or_conflict(fact: Fact) -> None:
    if fact.valid_to is None:
        return
    current = Fact.objects.filter(lineage=fact.lineage, valid_to__isnull=True).values_list("pk", flat=True).first()
    detail = f"its current version is {current}" if current else "the fact is deleted"
    raise ConflictError(f"fact {fact.pk} is a closed version: {detail}.", fields={"id": ["not current"]})


def fact_get_or_create(
    *,
    agent: Agent,
    user: EndUser | None,
    scopes: Sequence[str],
    content: str,
    tags: Sequence[str] = (),
    metadata: dict | None = None,
    source_session: Session | None = None,
    written_by: str,
    change_reason: str = "created by hand",
    key: str = "",
    world_time: WorldTime = UNKNOWN_WORLD_TIME,
) -> tuple[Fact, bool]:
    """The current fact with this content in the scope (same normalised hash), else a new one, embedded.
    Returns (fact, created). A concurrent writer of the same content gets the row the other one stored.
    With a profile key, the fact becomes that attribute's value and supersedes the previous one."""
    _content_validate(content)
    scopes = fact_scopes_validate(scopes=scopes, user=user)
    owner = user if FactScope.USER in scopes else None
    if key:
        if owner is None or FactScope.AGENT in scopes:
            raise ApplicationError("a profile key belongs to a user-only fact.", fields={"key": ["needs scope 'user'"]})
        fact, outcome = fact_profile_set(
            agent=agent,
            user=owner,
            key=key,
            content=content,
            source_session=source_session,
            change_reason=change_reason,
            written_by=written_by,
            world_time=world_time,
        )
        return fact, outcome == "created"
    same_content = Fact.objects.filter(
        agent=agent, user=owner, content_hash=fact_content_hash(content), valid_to__isnull=True
    )
    existing = same_content.first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            fact = fact_create(
                agent=agent,
                user=owner,
                scopes=scopes,
                content=content,
                change_reason=change_reason,
                source_session=source_session,
                tags=tags,
                metadata=metadata,
                written_by=written_by,
                world_time=world_time,
            )
    except IntegrityError:
        return same_content.get(), False
    return fact, True


def fact_revise(
    *,
    fact: Fact,
    content: str | None = None,
    scopes: Sequence[str] | None = None,
    user: EndUser | None = None,
    tags: Sequence[str] | None = None,
    metadata: dict | None = None,
    reason: str = "edited by hand",
    written_by: str,
    world_time: WorldTime | None = None,
) -> Fact:
    """A new version of a current fact (re-embedded when its content changes); what is not given carries over. The
    old version stays as history. `world_time` says when the statement held (an end given here is a change in the
    world, recorded as this new version)."""
    _current_or_conflict(fact)
    if content is not None:
        _content_validate(content)
    try:
        with transaction.atomic():
            return fact_supersede(
                fact=fact,
                content=content if content is not None else fact.content,
                reason=reason,
                scopes=scopes,
                user=user,
                tags=tags,
                metadata=metadata,
                written_by=written_by,
                world_time=world_time,
            )
    except IntegrityError as error:
        raise ConflictError(
            "another current fact in the same scope already says this.", fields={"content": ["duplicate"]}
        ) from error


def fact_delete(*, fact: Fact, reason: str = "deleted by hand") -> Fact:
    """Close a current fact: it leaves search but stays in its history and in `as_of` reads."""
    _current_or_conflict(fact)
    return fact_close(fact=fact, reason=reason)
