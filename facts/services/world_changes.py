"""Changes in the world found while reconciling (facts.services.reconciliation): a new statement in a single-valued
slot (facts.grammar.slots: where someone works, their job, where they live, their partner ...) ends the world validity
of the current statement of another value in that slot, where the new one begins; a statement that is over ("The user
used to work at Globex") ends the current statement of the same value. The ended statement stays current memory, a
new version of itself with its end (facts.services.facts.fact_world_end), with the reason and the messages that said
so. A statement said to have begun before the one it would end does not end it: it ended where that one began.
Operator-curated facts are never ended (docs/security.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from django.contrib.postgres.search import SearchQuery
from django.db.models import Q
from django.utils import timezone

from agents.models import Agent, EndUser
from conversations.models import Message
from core.models import TEXT_SEARCH_CONFIG
from facts.grammar.cessation import cessation_read
from facts.grammar.slots import SLOT_PREDICATES, USER, Slot, key_slot, relation_slot, said_of
from facts.models import EntityType, Fact, FactWriter, Relation
from facts.services.extraction import ExtractedFact
from facts.services.facts import fact_content_hash, fact_said_at, fact_world_end
from facts.services.graph import entity_name_normalize, predicate_normalize
from facts.world_time import TimePrecision, WorldTime


@dataclass(frozen=True)
class WorldEnd:
    """A current fact a new statement ends in the world: at `end` with `precision`, or, `precision` empty, where the
    new statement begins (the day it was said, roughly, when it does not say)."""

    fact: Fact
    reason: str
    end: date | None = None
    precision: str = ""


def extracted_slots(fact: ExtractedFact) -> list[Slot]:
    """The single-valued slots a new statement fills, from its relations."""
    slots = []
    for statement in fact.relations:
        subject = USER if statement.subject.is_user else entity_name_normalize(statement.subject.name)
        if statement.object is not None:
            target = USER if statement.object.is_user else entity_name_normalize(statement.object.name)
        else:
            target = statement.value
        slot = relation_slot(
            subject=subject,
            predicate=predicate_normalize(statement.predicate),
            target=target,
            target_is_organisation=statement.object is not None
            and statement.object.entity_type == EntityType.ORGANISATION,
        )
        if slot is not None:
            slots.append(slot)
    return slots


def stored_slots(*, agent: Agent, owner: EndUser) -> list[tuple[Fact, Slot]]:
    """The single-valued slots the owner's current facts fill, by their current relations (and profile keys)."""
    relations = (
        Relation.objects.filter(agent=agent, user=owner, valid_to__isnull=True, predicate__regex=SLOT_PREDICATES)
        .select_related("subject", "object_entity")
        .prefetch_related("source_facts")
    )
    found = []
    for relation in relations:
        target = relation.object_entity
        slot = relation_slot(
            subject=USER if relation.subject.is_user else entity_name_normalize(relation.subject.name),
            predicate=relation.predicate,
            target=(USER if target.is_user else entity_name_normalize(target.name))
            if target
            else relation.object_value,
            target_is_organisation=target is not None and target.entity_type == EntityType.ORGANISATION,
        )
        if slot is None:
            continue
        found += [(fact, slot) for fact in relation.source_facts.all() if fact.valid_to is None]
    return found


def _ends(*, new: ExtractedFact, slot: Slot, stored: Fact, stored_slot: Slot) -> WorldEnd | None:
    world = new.world_time
    if world.ended:  # a statement that is over ends the current one of the same value, when it ended
        if stored_slot.same_slot(slot) and stored_slot.value == slot.value:
            return WorldEnd(
                fact=stored,
                reason=f"ended: {new.content}"[:300],
                end=world.end,
                precision=world.end_precision,
            )
        return None
    if slot.other_value(stored_slot):
        return WorldEnd(fact=stored, reason=f"{slot.name.replace('_', ' ')} changed: {new.content}"[:300])
    return None


@dataclass
class SlotChanges:
    """What planning found for one new statement: the facts it ends, and, when it is older than the one in its slot,
    its own end (where that one began)."""

    ends: list[WorldEnd]
    world_time: WorldTime
    key: str


def slot_changes_plan(*, new: ExtractedFact, stored: list[tuple[Fact, Slot]], taken: set[int]) -> SlotChanges | None:
    """The world changes a new statement makes to its owner's `stored` slots (stored_slots), None when it makes none.
    Facts in `taken` are already ended or changed by another decision. A stored fact holding a profile key passes its
    key to the new value (which then ends it, as a profile attribute's new value does: fact_profile_set) rather
    than being ended here."""
    slots = extracted_slots(new)
    if not slots:
        return None
    changes = SlotChanges(ends=[], world_time=new.world_time, key=new.key)
    for slot in slots:
        for fact, stored_slot in stored:
            if fact.pk in taken or fact.is_curated or fact.held_until_precision:
                continue
            end = _ends(new=new, slot=slot, stored=fact, stored_slot=stored_slot)
            if end is None:
                continue
            world = changes.world_time
            if not world.ended and world.start and fact.held_from and world.start < fact.held_from:
                # Said to have begun before the stored one: it ended where that one began.
                changes.world_time = WorldTime(
                    start=world.start,
                    start_precision=world.start_precision,
                    end=fact.held_from,
                    end_precision=fact.held_from_precision,
                )
                continue
            taken.add(fact.pk)
            if fact.key and not changes.key and not world.ended and key_slot(fact.key) == slot.name:
                changes.key = fact.key  # the new value takes the attribute: fact_profile_set ends this one
                continue
            changes.ends.append(end)
    if not changes.ends and changes.world_time == new.world_time and changes.key == new.key:
        return None
    return changes


# How many of the owner's current statements naming what stopped are read for one statement that it stopped.
CESSATION_CANDIDATES = 50


def cessation_ends(*, new: ExtractedFact, agent: Agent, owner: EndUser, taken: set[int]) -> list[WorldEnd]:
    """A statement that something stopped ("The user gave up flamenco in 2020.", facts.grammar.cessation) ends the
    owner's current statements of the same person that say what stopped ("The user dances flamenco."), where it
    stopped (the new statement's end, else its start, else where it was said). An event is not ended (it was one
    time), nor a statement already ended, curated, or in `taken` (ended or changed by another decision)."""
    cessation = cessation_read(new.content)
    if cessation is None or not cessation.words:
        return []
    named = Fact.objects.filter(
        agent=agent,
        user=owner,
        valid_to__isnull=True,
        held_until_precision="",
        search_vector=SearchQuery(" ".join(cessation.words), config=TEXT_SEARCH_CONFIG, search_type="plain"),
    ).exclude(content_hash=fact_content_hash(new.content))
    if cessation.relationship:
        named = named.filter(Q(category="relationships") | Q(category=""))
    world = new.world_time
    # "left SEAT in March 2025" may come as a statement that ended then, or as one that began then; an event ("gave up
    # flamenco in 2020", said as one time) is when the stopping happened.
    ended = world.ended and not world.is_event
    end, precision = (world.end, world.end_precision) if ended else (world.start, world.start_precision)
    ends = []
    for fact in named.order_by("-pk")[:CESSATION_CANDIDATES]:
        if fact.pk in taken or fact.is_curated or fact.world_time.is_event or cessation_read(fact.content):
            continue
        if cessation.subject and not said_of(content=fact.content, subject=cessation.subject):
            continue
        taken.add(fact.pk)
        ends.append(
            WorldEnd(
                fact=fact, reason=f"stopped: {new.content}"[:300], end=end if precision else None, precision=precision
            )
        )
    return ends


def world_ends_apply(*, ends: Sequence[WorldEnd], new_world_time: WorldTime, sources: Sequence[Message]) -> list[Fact]:
    """End each fact's current version in the world (the caller holds the scope's lock): at the end planned, or where
    the new statement begins, or roughly the day it was said. A version curated, or ended, since planning is left as
    it is. Returns the ended versions written."""
    written = []
    said = fact_said_at(source_messages=sources, formed_at=timezone.now()).date()
    for end in ends:
        current = Fact.objects.filter(lineage=end.fact.lineage).order_by("-version").first()
        if current is None or current.valid_to is not None or current.is_curated or current.held_until_precision:
            continue
        if end.precision:
            at, precision = end.end, end.precision
        else:
            at = new_world_time.start or said
            precision = new_world_time.start_precision or TimePrecision.APPROXIMATE
        written.append(
            fact_world_end(
                fact=current,
                end=at,
                end_precision=precision,
                reason=end.reason,
                source_messages=sources,
                written_by=FactWriter.FORMATION,
            )
        )
    return written
