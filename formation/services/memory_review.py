"""An operator's decisions on held memory: approve it agent-wide, keep it at the user's scope, or reject it. The
fact or reflection is written through its own service; the held row records who decided and what was stored."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from core.exceptions import ApplicationError, ConflictError
from facts.models import FactScope, FactWriter
from facts.services.curation import fact_get_or_create
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


def _store(*, held: HeldMemory, agent_wide: bool) -> int:
    sources = list(held.source_messages.all())
    if held.kind == HeldMemory.Kind.FACT:
        fact, created = fact_get_or_create(
            agent=held.agent,
            user=None if agent_wide else held.user,
            scopes=[FactScope.AGENT] if agent_wide else [FactScope.USER],
            content=held.content,
            source_session=held.session,
            change_reason="approved from the review queue" if agent_wide else "kept for its user from the review queue",
            # Approved agent-wide, the operator vouches for it: curated, so no later conversation changes it.
            written_by=FactWriter.OPERATOR if agent_wide else FactWriter.FORMATION,
        )
        if created and sources:
            fact.source_messages.add(*sources)
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
