"""Facts written by hand, through the facts API and the memory tools: the checks a caller's input needs before
facts.services.facts stores it (word limit, duplicates, closed versions, racing writers), with errors naming the
field."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from agents.models import Agent, EndUser
from conversations.models import Session
from core.exceptions import ApplicationError, ConflictError
from facts.models import Fact, FactScope
from facts.services.facts import (
    fact_close,
    fact_content_hash,
    fact_create,
    fact_expiry_set,
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


def fact_expiry_resolve(*, expires_at: datetime | None, expires_in: timedelta | None) -> datetime | None:
    """When a fact given an expiry (a time, or a duration from now: "for a week") expires; None for never. An expiry
    in the past, or both given, is refused naming the field."""
    if expires_at is not None and expires_in is not None:
        raise ApplicationError(
            "give expires_at or expires_in, not both.", fields={"expires_in": ["not with expires_at"]}
        )
    now = timezone.now()
    if expires_in is not None:
        if expires_in <= timedelta(0):
            raise ApplicationError("expires_in must be a positive duration.", fields={"expires_in": ["not positive"]})
        return now + expires_in
    if expires_at is not None and expires_at <= now:
        raise ApplicationError(
            f"expires_at is in the past ({expires_at.isoformat()}); a fact expires at a future time.",
            fields={"expires_at": ["in the past"]},
        )
    return expires_at


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
    expires_at: datetime | None = None,
    world_time: WorldTime = UNKNOWN_WORLD_TIME,
) -> tuple[Fact, bool]:
    """The current fact with this content in the scope (same normalised hash), else a new one, embedded.
    Returns (fact, created). A concurrent writer of the same content gets the row the other one stored.
    With a profile key, the fact becomes that attribute's value and supersedes the previous one. `expires_at` (from
    fact_expiry_resolve) is set on the fact found or created: "remember this for a week" of something known already
    makes it expire too."""
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
            expires_at=expires_at,
            world_time=world_time,
        )
        if outcome == "updated" and expires_at is not None and fact.expires_at != expires_at:
            fact_expiry_set(fact=fact, expires_at=expires_at)  # the statement was known already, without a key
        return fact, outcome == "created"
    same_content = Fact.objects.filter(
        agent=agent, user=owner, content_hash=fact_content_hash(content), valid_to__isnull=True
    )
    existing = same_content.first()
    if existing is not None:
        if expires_at is not None and existing.expires_at != expires_at:
            fact_expiry_set(fact=existing, expires_at=expires_at)
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
                expires_at=expires_at,
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
    expires_at: datetime | None = None,
    expiry_changed: bool = False,
) -> Fact:
    """A new version of a current fact (re-embedded when its content changes); what is not given carries over. The
    old version stays as history. `world_time` says when the statement held (an end given here is a change in the
    world, recorded as this new version). With `expiry_changed`, the fact expires at `expires_at` (None: never); an
    expiry alone changes in place, without a new version, as pinning does."""
    _current_or_conflict(fact)
    if content is None and scopes is None and tags is None and metadata is None and world_time is None:
        if not expiry_changed:
            raise ApplicationError("nothing to change.", fields={"content": ["give something to change"]})
        return fact_expiry_set(fact=fact, expires_at=expires_at)
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
                expires_at=expires_at if expiry_changed else fact.expires_at,
            )
    except IntegrityError as error:
        raise ConflictError(
            "another current fact in the same scope already says this.", fields={"content": ["duplicate"]}
        ) from error


def fact_delete(*, fact: Fact, reason: str = "deleted by hand") -> Fact:
    """Close a current fact: it leaves search but stays in its history and in `as_of` reads."""
    _current_or_conflict(fact)
    return fact_close(fact=fact, reason=reason)
