"""Writes to facts. Every fact version is embedded in the active embedding space when it is written."""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import cast

import numpy as np
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.utils import timezone

from agents.models import Agent, EndUser
from conversations.models import Message, Session
from core.embeddings.spaces import embedding_provider_for_space, embedding_space_active
from core.exceptions import ApplicationError
from core.models import EmbeddingSpace
from core.runtime.queueing import task_enqueue_safely
from core.search.time_expressions import referred_date
from facts import task_names as facts_tasks
from facts.grammar.categories import statement_file
from facts.models import PROFILE_KEY_VALIDATOR, Fact, FactEmbedding, FactScope, FactWriter
from facts.services.graph import relations_carry_to_successor, relations_close_for_fact, relations_erase_for_facts
from facts.signals import user_profile_changed
from facts.world_time import UNKNOWN_WORLD_TIME, TimePrecision, WorldTime
from webhooks.models import WebhookEventType
from webhooks.services.events import NewWebhookEvent, webhook_events_record

_WHITESPACE = re.compile(r"\s+")


def fact_content_normalize(content: str) -> str:
    return _WHITESPACE.sub(" ", content).strip()


def fact_content_hash(content: str) -> str:
    """Equal for contents that differ only in case, spacing or a trailing full stop."""
    key = fact_content_normalize(content).lower().rstrip(".!")
    return hashlib.sha256(key.encode()).hexdigest()


def fact_scopes_validate(*, scopes: Sequence[str], user: EndUser | None) -> list[str]:
    valid = [scope for scope in FactScope.values if scope in set(scopes)]
    if not valid or len(valid) != len(set(scopes)):
        raise ApplicationError("scopes must be a non-empty list of 'user' and 'agent'.", fields={"scopes": ["invalid"]})
    if FactScope.USER in valid and user is None:
        raise ApplicationError("a user-scoped fact needs a user.", fields={"user": ["required for scope 'user'"]})
    return valid


def fact_embeddings_write(*, facts: Sequence[Fact], space: EmbeddingSpace, vectors: Sequence[np.ndarray]) -> None:
    FactEmbedding.objects.bulk_create(
        [
            FactEmbedding(
                fact=fact,
                space=space,
                agent_id=fact.agent_id,
                restricted_to_user_id=fact.restricted_to_user_id,
                embedding=vector,
            )
            for fact, vector in zip(facts, vectors, strict=True)
        ],
        ignore_conflicts=True,
    )


def fact_said_at(*, source_messages: Sequence[Message], formed_at: datetime) -> datetime:
    """What a fact's relative dates ("last Saturday") are resolved against: when the last of the messages it was formed
    from was said (an imported conversation formed today speaks of its own dates), else when it was formed."""
    return max((message.created_at for message in source_messages), default=formed_at)


@dataclass(frozen=True)
class NewFact:
    """One fact for facts_create_bulk: its owner (None for agent-wide), scopes, content, the messages it comes from
    (or their ids) and its vector in the space given (None: embedded later, facts_embed_missing), and when its statement
    held in the world as far as it was said. An import also gives when it was recorded, its session, tags and
    metadata."""

    user: EndUser | None
    scopes: Sequence[str]
    content: str
    source_messages: Sequence[Message] = ()
    embedding: np.ndarray | None = None
    source_message_ids: Sequence[int] = ()
    valid_from: datetime | None = None
    source_session: Session | None = None
    tags: Sequence[str] = ()
    metadata: dict | None = None
    world_time: WorldTime = UNKNOWN_WORLD_TIME
    # Its category and value (an import's own); empty: filed by the offline lexicons (facts.grammar.categories).
    category: str = ""
    category_value: str = ""


# Writers whose facts come without entities and relations: a worker parses them (facts.services.graph_extraction).
# Formation's extractor lists them with the facts; an import parses its batches itself.
GRAPH_EXTRACTED_LATER = frozenset({FactWriter.API, FactWriter.OPERATOR, FactWriter.ASSISTANT})


def fact_event_data(fact: Fact, previous: Fact | None = None) -> dict:
    """A fact version as webhooks report it: its ids, version, content and validity (what a receiver needs to mirror
    it, or to fetch it with GET /api/v1/facts/{id}); for an update, the version it supersedes."""
    data: dict = {
        "agent": fact.agent.external_id,
        "user": fact.user.external_id if fact.user is not None else None,
        "fact": {
            "id": fact.pk,
            "lineage": str(fact.lineage),
            "version": fact.version,
            "content": fact.content,
            "scopes": list(fact.scopes),
            "key": fact.key,
            "valid_from": fact.valid_from.isoformat(),
            "valid_to": fact.valid_to.isoformat() if fact.valid_to else None,
            "world_time": fact.world_time.as_dict(today=timezone.now().date()),
            "expires_at": fact.expires_at.isoformat() if fact.expires_at else None,
            "change_reason": fact.change_reason,
            "closed_reason": fact.closed_reason,
            "written_by": fact.written_by,
        },
    }
    if previous is not None:
        data["previous"] = {"id": previous.pk, "version": previous.version}
    return data


def fact_erased_event_data(fact: Fact) -> dict:
    """An erased fact as webhooks report it: ids only (its content is what the erasure removed). Not tied to its
    user, so that the event outlives the rows it reports on."""
    return {"agent": fact.agent.external_id, "fact": {"id": fact.pk, "lineage": str(fact.lineage)}}


def facts_events_record(*, facts: Sequence[Fact], event_type: str, previous: Fact | None = None) -> None:
    """The webhook events of these fact versions (one agent's), in the caller's transaction: written only when an
    endpoint of the agent wants them (webhooks.services.events)."""
    if facts:
        webhook_events_record(
            agent_id=facts[0].agent_id,
            events=[
                NewWebhookEvent(
                    event_type=event_type,
                    data=functools.partial(fact_event_data, fact, previous),
                    user_id=fact.user_id,
                )
                for fact in facts
            ],
        )


def facts_graph_extract_later(*, fact_ids: Sequence[int]) -> None:
    """Queue facts_graph_extract for a worker once the transaction writing the facts commits."""
    ids = sorted(set(fact_ids))
    if ids:
        transaction.on_commit(lambda: task_enqueue_safely(facts_tasks.GRAPH_EXTRACT, ids))


def _filing(content: str, *, category: str, value: str) -> dict[str, str]:
    """The category columns of a fact being written: those given, else the offline lexicons' (every writer files
    what it writes; formation then files again with the LLM's category and a value canonical for the person,
    facts.services.categories)."""
    if not category:
        filing = statement_file(content)
        category, value = filing.category, filing.value
    return {"category": category, "category_value": value[:200]}


def facts_create_bulk(
    *,
    agent: Agent,
    new_facts: Sequence[NewFact],
    change_reason: str,
    source_session: Session | None,
    space: EmbeddingSpace,
    written_by: str,
) -> list[Fact]:
    """fact_create for many facts without a profile key, inside the caller's transaction: one INSERT of the facts,
    one of their source-message links and one of their vectors, where fact_create takes a savepoint and three
    statements per fact. Duplicates are the caller's to rule out, as for fact_create. `source_session` applies to
    the facts that do not name their own."""
    now = timezone.now()
    rows = []
    for item in new_facts:
        scopes = fact_scopes_validate(scopes=item.scopes, user=item.user)
        content = fact_content_normalize(item.content)
        if not content:
            raise ApplicationError("content must not be empty.", fields={"content": ["empty"]})
        rows.append(
            Fact(
                agent=agent,
                user=item.user if FactScope.USER in scopes else None,
                scopes=scopes,
                content=content,
                content_hash=fact_content_hash(content),
                formed_at=now,
                valid_from=item.valid_from or now,
                refers_to=referred_date(
                    text=content,
                    said_at=item.valid_from or fact_said_at(source_messages=item.source_messages, formed_at=now),
                ),
                change_reason=change_reason,
                source_session=item.source_session or source_session,
                written_by=written_by,
                tags=list(item.tags),
                metadata=item.metadata or {},
                held_from=item.world_time.start,
                held_from_precision=item.world_time.start_precision,
                held_until=item.world_time.end,
                held_until_precision=item.world_time.end_precision,
                **_filing(content, category=item.category, value=item.category_value),
            )
        )
    if not rows:
        return []
    created = Fact.objects.bulk_create(rows)
    links = Fact.source_messages.through
    links.objects.bulk_create(
        [
            links(fact_id=fact.pk, message_id=message_id)
            for fact, item in zip(created, new_facts, strict=True)
            for message_id in dict.fromkeys([*(m.pk for m in item.source_messages), *item.source_message_ids])
        ]
    )
    embedded = [
        (fact, item.embedding) for fact, item in zip(created, new_facts, strict=True) if item.embedding is not None
    ]
    if embedded:
        fact_embeddings_write(
            facts=[fact for fact, _ in embedded], space=space, vectors=[vector for _, vector in embedded]
        )
    if written_by in GRAPH_EXTRACTED_LATER:
        facts_graph_extract_later(fact_ids=[fact.pk for fact in created])
    facts_events_record(facts=created, event_type=WebhookEventType.FACT_CREATED)
    return created


def facts_embed_missing(*, fact_ids: Iterable[int], space: EmbeddingSpace | None = None) -> int:
    """Embed those of the given facts that have no vector in the space yet; idempotent. Returns how many."""
    space = space or embedding_space_active()
    facts = list(Fact.objects.filter(pk__in=list(fact_ids)).exclude(embeddings__space=space).order_by("pk"))
    if not facts:
        return 0
    vectors = embedding_provider_for_space(space=space).embed([fact.content for fact in facts])
    fact_embeddings_write(facts=facts, space=space, vectors=vectors)
    return len(facts)


def profile_key_validate(*, key: str, user: EndUser | None) -> str:
    key = (key or "").strip()
    if not key:
        return ""
    try:
        PROFILE_KEY_VALIDATOR(key)
    except DjangoValidationError as error:
        raise ApplicationError(f"invalid profile key {key!r}.", fields={"key": list(error.messages)}) from error
    if user is None:
        raise ApplicationError("a profile key belongs to a user-scoped fact.", fields={"key": ["needs scope 'user'"]})
    return key


def _profile_changed_on_commit(fact: Fact) -> None:
    """The always-in-context block shows the user's profile, keyed and by category: a keyed or filed fact's change
    invalidates it."""
    if (fact.key or fact.category) and fact.user_id:
        agent_id, user_id = fact.agent_id, fact.user_id
        transaction.on_commit(lambda: user_profile_changed.send(sender=Fact, agent_id=agent_id, user_id=user_id))


@transaction.atomic
def fact_profile_set(
    *,
    agent: Agent,
    user: EndUser,
    key: str,
    content: str,
    value: str | None = None,
    source_session: Session | None = None,
    source_messages: Sequence[Message] = (),
    embedding: np.ndarray | None = None,
    space: EmbeddingSpace | None = None,
    change_reason: str = "created",
    metadata: dict | None = None,
    written_by: str = FactWriter.FORMATION,
    world_time: WorldTime = UNKNOWN_WORLD_TIME,
    expires_at: datetime | None = None,
) -> tuple[Fact, str]:
    """Set a user's profile attribute (a single-valued slot: home city, employer). A new value is a change in the
    world: the current value ends where the new one begins (fact_world_end: it stays current memory, ended, and gives
    up the key), and the new value is a fact of its own holding the key. The same value changes nothing. Returns the
    current value's fact and what happened: created, updated or unchanged."""
    key = profile_key_validate(key=key, user=user)
    metadata = {**(metadata or {}), **({"value": value} if value is not None else {})}
    current = Fact.objects.select_for_update().filter(agent=agent, user=user, key=key, valid_to__isnull=True).first()
    content_hash = fact_content_hash(content)
    if current is not None:
        if current.content_hash == content_hash:
            return current, "unchanged"
        # Where the new value begins; said without a time, it held by the day it was said: the old one ended then or
        # before, roughly.
        said = fact_said_at(source_messages=source_messages, formed_at=timezone.now()).date()
        fact_world_end(
            fact=current,
            end=world_time.start or said,
            end_precision=world_time.start_precision or TimePrecision.APPROXIMATE,
            reason="new value",
            source_messages=source_messages,
            written_by=written_by,
            keep_key=False,
        )
    same_statement = Fact.objects.filter(
        agent=agent, user=user, content_hash=content_hash, valid_to__isnull=True
    ).first()
    if same_statement is not None:  # already known without a key: it becomes the attribute's value
        same_statement.key = key
        same_statement.metadata = {**same_statement.metadata, **metadata}
        same_statement.save(update_fields=["key", "metadata"])
        _profile_changed_on_commit(same_statement)
        return same_statement, "updated"
    fact = fact_create(
        agent=agent,
        user=user,
        scopes=[FactScope.USER],
        content=content,
        change_reason="new value" if current is not None else change_reason,
        source_session=source_session,
        source_messages=source_messages,
        metadata=metadata,
        embedding=embedding,
        space=space,
        key=key,
        written_by=written_by,
        world_time=world_time,
        expires_at=expires_at,
    )
    return fact, "updated" if current is not None else "created"


@transaction.atomic
def fact_create(
    *,
    agent: Agent,
    user: EndUser | None,
    scopes: Sequence[str],
    content: str,
    change_reason: str = "created",
    source_session: Session | None = None,
    source_messages: Sequence[Message] = (),
    tags: Sequence[str] = (),
    metadata: dict | None = None,
    valid_from: datetime | None = None,
    embedding: np.ndarray | None = None,
    space: EmbeddingSpace | None = None,
    key: str = "",
    pinned: bool = False,
    written_by: str = FactWriter.FORMATION,
    world_time: WorldTime = UNKNOWN_WORLD_TIME,
    expires_at: datetime | None = None,
) -> Fact:
    """Store and embed a new current fact. The caller handles duplicates (the unique constraints reject a second
    current fact with the same content, or the same profile key, in the same scope). A given embedding belongs to
    `space` (the active space when not given). `world_time`: when the statement held in the world, if said.
    `expires_at`: when it leaves search, the context block and the bundle (retention then closes it)."""
    fact = _fact_write(
        agent=agent,
        user=user,
        scopes=scopes,
        content=content,
        change_reason=change_reason,
        source_session=source_session,
        source_messages=source_messages,
        tags=tags,
        metadata=metadata,
        valid_from=valid_from,
        embedding=embedding,
        space=space,
        key=key,
        pinned=pinned,
        written_by=written_by,
        world_time=world_time,
        expires_at=expires_at,
    )
    facts_events_record(facts=[fact], event_type=WebhookEventType.FACT_CREATED)
    return fact


def _fact_write(
    *,
    agent: Agent,
    user: EndUser | None,
    scopes: Sequence[str],
    content: str,
    change_reason: str = "created",
    source_session: Session | None = None,
    source_messages: Sequence[Message] = (),
    tags: Sequence[str] = (),
    metadata: dict | None = None,
    valid_from: datetime | None = None,
    embedding: np.ndarray | None = None,
    space: EmbeddingSpace | None = None,
    key: str = "",
    pinned: bool = False,
    written_by: str = FactWriter.FORMATION,
    world_time: WorldTime = UNKNOWN_WORLD_TIME,
    expires_at: datetime | None = None,
    filed: tuple[str, str] = ("", ""),
) -> Fact:
    """fact_create without its webhook event (a successor of fact_supersede reports an update instead)."""
    scopes = fact_scopes_validate(scopes=scopes, user=user)
    key = profile_key_validate(key=key, user=user if FactScope.USER in scopes else None)
    content = fact_content_normalize(content)
    if not content:
        raise ApplicationError("content must not be empty.", fields={"content": ["empty"]})
    owner = user if FactScope.USER in scopes else None
    now = timezone.now()
    fact = Fact.objects.create(
        agent=agent,
        user=owner,
        scopes=scopes,
        content=content,
        content_hash=fact_content_hash(content),
        formed_at=now,
        valid_from=valid_from or now,
        refers_to=referred_date(
            text=content, said_at=valid_from or fact_said_at(source_messages=source_messages, formed_at=now)
        ),
        change_reason=change_reason,
        source_session=source_session,
        tags=list(tags),
        metadata=metadata or {},
        key=key,
        pinned=pinned,
        written_by=written_by,
        held_from=world_time.start,
        held_from_precision=world_time.start_precision,
        held_until=world_time.end,
        held_until_precision=world_time.end_precision,
        expires_at=expires_at,
        **_filing(content, category=filed[0], value=filed[1]),
    )
    if source_messages:
        fact.source_messages.add(*source_messages)  # a new fact has none: add() skips set()'s read of them
    _profile_changed_on_commit(fact)
    space = space or embedding_space_active()
    vector = embedding if embedding is not None else embedding_provider_for_space(space=space).embed_one(content)
    fact_embeddings_write(facts=[fact], space=space, vectors=[vector])
    if written_by in GRAPH_EXTRACTED_LATER:
        facts_graph_extract_later(fact_ids=[fact.pk])
    return fact


# fact_supersede's expires_at when not given: the closed version's.
_CARRIED_OVER = object()


def _current_for_update(fact: Fact) -> Fact:
    current = Fact.objects.select_for_update().get(pk=fact.pk)
    if current.valid_to is not None:
        raise ApplicationError(
            "this fact version is already closed; change its current version.", fields={"id": ["not current"]}
        )
    return current


@transaction.atomic
def fact_close(
    *,
    fact: Fact,
    reason: str,
    closed_by_messages: Sequence[Message] = (),
    superseded_by: Fact | None = None,
) -> Fact:
    """Close the current version (a DELETE): it stays stored and visible in history and `as_of` reads."""
    current = _current_for_update(fact)
    current.valid_to = timezone.now()
    current.closed_reason = reason
    current.superseded_by = superseded_by
    current.save(update_fields=["valid_to", "closed_reason", "superseded_by"])
    relations_close_for_fact(fact=current, reason=reason)
    if closed_by_messages:
        current.closed_by_messages.add(*closed_by_messages)
    _profile_changed_on_commit(current)
    facts_events_record(facts=[current], event_type=WebhookEventType.FACT_CLOSED)
    return current


@transaction.atomic
def fact_supersede(
    *,
    fact: Fact,
    content: str,
    reason: str,
    scopes: Sequence[str] | None = None,
    user: EndUser | None = None,
    source_session: Session | None = None,
    source_messages: Sequence[Message] = (),
    tags: Sequence[str] | None = None,
    metadata: dict | None = None,
    embedding: np.ndarray | None = None,
    space: EmbeddingSpace | None = None,
    written_by: str = FactWriter.FORMATION,
    world_time: WorldTime | None = None,
    key: str | None = None,
    expires_at: datetime | None | object = _CARRIED_OVER,
) -> Fact:
    """An UPDATE: close the current version and write its successor (same lineage, version + 1, re-embedded unless
    it says the same). Scopes, user, tags, metadata, the profile key, the expiry and, for the same content, world
    time carry over unless given (`expires_at=None`: none)."""
    current = _current_for_update(fact)
    now = timezone.now()
    current.valid_to = now
    current.closed_reason = reason
    current.save(update_fields=["valid_to", "closed_reason"])
    if source_messages:
        current.closed_by_messages.add(*source_messages)
    scopes = list(scopes) if scopes is not None else current.scopes
    same_content = fact_content_normalize(content) == current.content
    if embedding is None and same_content:
        space = space or embedding_space_active()
        embedding = FactEmbedding.objects.filter(fact=current, space=space).values_list("embedding", flat=True).first()
    successor = _fact_write(
        agent=current.agent,
        user=user if user is not None else current.user,
        scopes=scopes,
        content=content,
        change_reason=reason,
        source_session=source_session or current.source_session,
        source_messages=source_messages,
        tags=tags if tags is not None else current.tags,
        metadata=metadata if metadata is not None else current.metadata,
        valid_from=now,
        embedding=embedding,
        space=space,
        key=current.key if key is None else key,
        pinned=current.pinned,
        written_by=written_by,
        world_time=world_time if world_time is not None else current.world_time if same_content else UNKNOWN_WORLD_TIME,
        expires_at=current.expires_at if expires_at is _CARRIED_OVER else cast(datetime | None, expires_at),
        filed=(current.category, current.category_value) if same_content else ("", ""),
    )
    Fact.objects.filter(pk=successor.pk).update(lineage=current.lineage, version=current.version + 1)
    successor.lineage, successor.version = current.lineage, current.version + 1
    current.superseded_by = successor
    current.save(update_fields=["superseded_by"])
    if successor.content_hash == current.content_hash:
        relations_carry_to_successor(fact=current, successor=successor)
    relations_close_for_fact(fact=current, reason=reason)
    facts_events_record(facts=[successor], event_type=WebhookEventType.FACT_UPDATED, previous=current)
    return successor


@transaction.atomic
def fact_world_end(
    *,
    fact: Fact,
    end: date | None,
    end_precision: str,
    reason: str,
    source_messages: Sequence[Message] = (),
    written_by: str = FactWriter.FORMATION,
    keep_key: bool = True,
) -> Fact:
    """A change in the world, not a correction: what the current version `fact` states stopped holding at `end` (with
    its precision), or at a time unknown (`end` None). A new version of the same lineage says the same, ended, with the
    reason and the messages that said so (its vector kept): the statement stays current memory, since it is still
    true that it held; the earlier version stays in history. A correction closes a version instead (fact_close,
    fact_supersede). An end before the statement's start cannot be: it ended, when unknown. Without `keep_key` the
    ended statement gives up its profile key (the new value takes it)."""
    world = fact.world_time
    if end is not None and world.start is not None and end < world.start:
        end = None
    ended = WorldTime(
        start=world.start,
        start_precision=world.start_precision,
        end=end,
        end_precision=end_precision if end is not None else TimePrecision.UNKNOWN,
    )
    return fact_supersede(
        fact=fact,
        content=fact.content,
        reason=reason,
        source_messages=source_messages,
        written_by=written_by,
        world_time=ended,
        key=None if keep_key else "",
    )


def facts_reembed(*, fact_ids: Iterable[int], space: EmbeddingSpace | None = None) -> int:
    """Recompute the vectors of the given fact versions in the space (an operator's repair after a model glitch or a
    bad import). The old vectors are replaced in one transaction, so search never finds the facts missing."""
    space = space or embedding_space_active()
    facts = list(Fact.objects.filter(pk__in=list(fact_ids)).defer("search_vector").order_by("pk"))
    if not facts:
        return 0
    vectors = embedding_provider_for_space(space=space).embed([fact.content for fact in facts])
    with transaction.atomic():
        FactEmbedding.objects.filter(space=space, fact__in=facts).delete()
        fact_embeddings_write(facts=facts, space=space, vectors=vectors)
    return len(facts)


def facts_reembed_request(*, fact_ids: Iterable[int]) -> None:
    """Queue facts_reembed after commit: embedding many facts is background work."""
    ids = sorted(set(fact_ids))
    transaction.on_commit(lambda: task_enqueue_safely(facts_tasks.REEMBED, ids))


@transaction.atomic
def facts_erase(*, fact_ids: Iterable[int]) -> int:
    """Hard-delete the given facts with every version of their lineages, the versions' embeddings and the relations
    only they stated: the one destructive operation on facts, for content that must not be kept even as history.
    Returns the versions deleted."""
    lineages = Fact.objects.filter(pk__in=list(fact_ids)).values("lineage")
    erased = list(  # one version per lineage, to name it
        Fact.objects.filter(lineage__in=lineages)
        .select_related("agent")
        .order_by("lineage", "-version")
        .distinct("lineage")
    )
    for agent_id in {fact.agent_id for fact in erased}:
        webhook_events_record(
            agent_id=agent_id,
            events=[
                NewWebhookEvent(
                    event_type=WebhookEventType.FACT_ERASED,
                    data=functools.partial(fact_erased_event_data, fact),
                )
                for fact in erased
                if fact.agent_id == agent_id
            ],
        )
    relations_erase_for_facts(fact_ids=list(Fact.objects.filter(lineage__in=lineages).values_list("pk", flat=True)))
    _, per_model = Fact.objects.filter(lineage__in=lineages).delete()
    return per_model.get(Fact._meta.label, 0)


def fact_expiry_set(*, fact: Fact, expires_at: datetime | None) -> Fact:
    """Set (or clear, None) when a current fact expires. Like pinning, no new version: it is a decision about keeping
    the fact, not a change of what it says. The database copies it to the fact's search rows."""
    Fact.objects.filter(pk=fact.pk).update(expires_at=expires_at)
    fact.expires_at = expires_at
    return fact


def facts_expired_close(*, limit: int = 1000) -> int:
    """Close the current facts whose expiry has passed (retention's pass; they already left search at that moment),
    each kept as history with the reason "expired". Returns how many."""
    expired = Fact.objects.filter(valid_to__isnull=True, expires_at__lte=timezone.now()).order_by("expires_at")
    return facts_close(facts=expired.select_related("agent", "user")[:limit], reason="expired")


def facts_pin(*, fact_ids: Iterable[int], pinned: bool) -> int:
    """Pin (or unpin) current facts: retention never evicts a pinned fact. Pinning writes no new version: it is the
    operator's decision about keeping the fact, not a change of what it says. Returns how many changed."""
    return (
        Fact.objects.filter(pk__in=list(fact_ids), valid_to__isnull=True).exclude(pinned=pinned).update(pinned=pinned)
    )


def facts_close(*, facts: Iterable[Fact], reason: str) -> int:
    """Close the current ones among `facts` (each kept as history); closed versions are left as they are. Returns
    how many were closed."""
    closed = 0
    for fact in facts:
        if fact.valid_to is None:
            fact_close(fact=fact, reason=reason)
            closed += 1
    return closed


def facts_scope_change(
    *, facts: Iterable[Fact], scopes: Sequence[str], reason: str, written_by: str
) -> tuple[int, list[int]]:
    """A new version with `scopes` for each current fact whose scopes differ. An agent-wide fact has no user to be
    scoped to: such facts are skipped. Returns (how many changed, the ids skipped)."""
    changed, skipped = 0, []
    for fact in facts:
        if fact.valid_to is not None or sorted(fact.scopes) == sorted(scopes):
            continue
        if FactScope.USER in scopes and fact.user_id is None:
            skipped.append(fact.pk)
            continue
        fact_supersede(fact=fact, content=fact.content, reason=reason, scopes=scopes, written_by=written_by)
        changed += 1
    return changed, skipped


def fact_referred_dates_backfill(*, after_id: int, limit: int) -> tuple[int, int | None]:
    """The day each fact version's text names (refers_to), for versions written before it was kept: one batch in id
    order after `after_id`, resolved as fact_create resolves it (against an import's valid_from, else when its
    source messages were said, else when it became valid). Returns how many got a day and the last id read (None
    when there is nothing after it). Idempotent."""
    facts = list(
        Fact.objects.filter(pk__gt=after_id, refers_to__isnull=True)
        .only("pk", "content", "valid_from", "formed_at", "written_by", "refers_to")
        .prefetch_related("source_messages")
        .order_by("pk")[:limit]
    )
    dated = []
    for fact in facts:
        sources = list(fact.source_messages.all())
        said_at = (
            fact.valid_from
            if fact.written_by == FactWriter.IMPORT or not sources
            else fact_said_at(source_messages=sources, formed_at=fact.formed_at)
        )
        fact.refers_to = referred_date(text=fact.content, said_at=said_at)
        if fact.refers_to is not None:
            dated.append(fact)
    Fact.objects.bulk_update(dated, ["refers_to"])
    return len(dated), facts[-1].pk if facts else None
