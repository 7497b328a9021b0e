"""An operator's decisions on held memory: approve it agent-wide, keep it at the user's scope, or reject it. The
fact or reflection is written through its own service; the held row records who decided and what was stored."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from conversations.models import Message
from core.exceptions import ApplicationError, ConflictError
from facts.models import Fact, FactScope, FactWriter
from facts.services.curation import fact_get_or_create
from facts.services.facts import GRAPH_EXTRACTED_LATER, facts_graph_extract_later
from facts.services.graph import RelationStatement, fact_relations_write
from facts.services.reconciliation import facts_scope_lock
from formation.models import HeldMemory
from formation.services.memory_trust import RULES_DECIDED_BY
from reflections.models import MemoryScope, Reflection
from reflections.services.reflections import reflection_create


def _undecided(held: HeldMemory) -> HeldMemory:
    """The row locked, if no operator decided it yet (what the rules rejected, an operator may still overturn)."""
    current = HeldMemory.objects.select_for_update().get(pk=held.pk)
    if current.status != HeldMemory.Status.PENDING and current.decided_by != RULES_DECIDED_BY:
        raise ConflictError(
            f"held memory {held.pk} was already decided ({current.get_status_display()} by {current.decided_by}).",
            fields={"status": [current.status]},
        )
    return current


def _held_fact_relations_write(
    *, held: HeldMemory, fact: Fact, sources: list[Message], written_by: str, created: bool
) -> None:
    """The relations the held fact states, as if formation had stored it: the extractor's own statements, kept with
    the held row, linked to the fact and the messages it came from. A fact held with none recorded (the assistant's
    tools) is parsed like any fact written without them, unless its writer already queued that."""
    if held.relations is None:
        if not (created and written_by in GRAPH_EXTRACTED_LATER):
            facts_graph_extract_later(fact_ids=[fact.pk])
        return
    facts_scope_lock(agent=fact.agent, owner=fact.user)  # as in formation: no race on the scope's entity aliases
    fact_relations_write(
        fact=fact,
        statements=[RelationStatement.from_json(statement) for statement in held.relations],
        source_messages=sources,
    )


def _store(*, held: HeldMemory, agent_wide: bool) -> int:
    sources = list(held.source_messages.all())
    if held.kind == HeldMemory.Kind.FACT:
        # Approved agent-wide, the operator vouches for it: curated, so no later conversation changes it.
        written_by = FactWriter.OPERATOR if agent_wide else FactWriter.FORMATION
        fact, created = fact_get_or_create(
            agent=held.agent,
            user=None if agent_wide else held.user,
            scopes=[FactScope.AGENT] if agent_wide else [FactScope.USER],
            content=held.content,
            source_session=held.session,
            change_reason="approved from the review queue" if agent_wide else "kept for its user from the review queue",
            written_by=written_by,
        )
        if created and sources:
            fact.source_messages.add(*sources)
        _held_fact_relations_write(held=held, fact=fact, sources=sources, written_by=written_by, created=created)
        return fact.pk
    reflection = reflection_create(
        agent=held.agent,
        scope=MemoryScope.AGENT if agent_wide else MemoryScope.USER,
        content=held.content,
        user=None if agent_wide else held.user,
        source=Reflection.Source.MANUAL if agent_wide else Reflection.Source.FORMATION,
        source_session=held.session,
    )
    return reflection.pk


def _decide(*, held: HeldMemory, status: str, decided_by: str, stored_id: int | None) -> HeldMemory:
    held.status, held.decided_by, held.decided_at, held.stored_id = status, decided_by, timezone.now(), stored_id
    held.save(update_fields=["status", "decided_by", "decided_at", "stored_id"])
    return held


@transaction.atomic
def held_memory_approve(*, held: HeldMemory, decided_by: str) -> HeldMemory:
    """Store it agent-wide: every user of the agent sees it from now on."""
    held = _undecided(held)
    return _decide(
        held=held,
        status=HeldMemory.Status.APPROVED,
        decided_by=decided_by,
        stored_id=_store(held=held, agent_wide=True),
    )


@transaction.atomic
def held_memory_keep_for_user(*, held: HeldMemory, decided_by: str) -> HeldMemory:
    """Store it for the user who said it only."""
    held = _undecided(held)
    if held.user is None:
        raise ApplicationError(
            "this memory has no user to keep it for: approve or reject it.", fields={"user": ["missing"]}
        )
    return _decide(
        held=held,
        status=HeldMemory.Status.KEPT_FOR_USER,
        decided_by=decided_by,
        stored_id=_store(held=held, agent_wide=False),
    )


@transaction.atomic
def held_memory_reject(*, held: HeldMemory, decided_by: str) -> HeldMemory:
    held = _undecided(held)
    return _decide(held=held, status=HeldMemory.Status.REJECTED, decided_by=decided_by, stored_id=None)
