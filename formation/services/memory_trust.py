"""Trust per source: what an end user's words may become in memory that other users read.

Facts and reflections formed from a conversation (and saved by the assistant's tools during one) come from an end
user. Agent-wide memory is read by every user of the agent, so it is written from a user's words only as the agent's
`agent_memory_from_users` allows: held for an operator's review (the default), kept at the user's own scope, or
stored freely (an opt-in for single-user agents). Whatever reads as an instruction to the model (core.safety.injection)
is never stored; it is kept as a rejected HeldMemory with the rule that caught it, for operators to see."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from django.db import transaction
from django.utils import timezone

from agents.models import Agent, AgentMemoryFromUsers, EndUser
from conversations.models import Message, Session
from core.safety.injection import injection_finding
from facts.models import FactScope
from facts.services.extraction import ExtractedFact
from facts.services.graph import RelationStatement
from formation.models import HeldMemory
from reflections.models import MemoryScope
from reflections.services.reflections import LEVELS, ReflectionDrafts
from webhooks.models import WebhookEventType
from webhooks.services.events import NewWebhookEvent, webhook_events_record

RULES_DECIDED_BY = "rules (core.safety.injection)"


@dataclass(frozen=True)
class HeldCandidate:
    kind: str
    content: str
    reason: str
    detail: str
    source_messages: Sequence[Message] = ()
    # What the extractor stated with a fact; None when nothing extracted any (the assistant's tools, reflections).
    relations: Sequence[RelationStatement] | None = None


@dataclass
class TrustedFormation:
    """Formation's output as the agent's trust setting lets it be stored, and what is held back."""

    facts: list[ExtractedFact] = field(default_factory=list)
    drafts: ReflectionDrafts = field(default_factory=ReflectionDrafts)
    held: list[HeldCandidate] = field(default_factory=list)


def _agent_wide_detail(agent: Agent) -> str:
    return f"agent-wide memory from an end user (agent_memory_from_users = {agent.agent_memory_from_users})"


def facts_from_user_route(*, agent: Agent, extracted: Sequence[ExtractedFact]) -> TrustedFormation:
    """The facts formation may store, the ones held for review and the ones rejected as injection."""
    routed = TrustedFormation()
    policy = agent.agent_memory_from_users
    for fact in extracted:
        finding = injection_finding(fact.content)
        if finding is not None:
            routed.held.append(
                HeldCandidate(
                    kind=HeldMemory.Kind.FACT,
                    content=fact.content,
                    reason=HeldMemory.Reason.INJECTION,
                    detail=finding.detail,
                    source_messages=fact.source_messages,
                    relations=fact.relations,
                )
            )
            continue
        if FactScope.AGENT not in fact.scopes or policy == AgentMemoryFromUsers.OPEN:
            routed.facts.append(fact)
            continue
        if policy == AgentMemoryFromUsers.REVIEW:
            routed.held.append(
                HeldCandidate(
                    kind=HeldMemory.Kind.FACT,
                    content=fact.content,
                    reason=HeldMemory.Reason.AGENT_SCOPE_FROM_USER,
                    detail=_agent_wide_detail(agent),
                    source_messages=fact.source_messages,
                    relations=fact.relations,
                )
            )
            if FactScope.USER not in fact.scopes:
                continue
        routed.facts.append(replace(fact, scopes=[FactScope.USER]))
    return routed


def reflections_from_user_route(
    *, agent: Agent, drafts: ReflectionDrafts, source_messages: Sequence[Message]
) -> TrustedFormation:
    """The reflections formation may store (agent-level ones per the agent's setting: held, moved to the user's
    level, or kept), and the ones rejected as injection."""
    routed = TrustedFormation()
    policy = agent.agent_memory_from_users
    for level in LEVELS:
        for note in getattr(drafts, level):
            finding = injection_finding(note)
            if finding is not None:
                routed.held.append(
                    HeldCandidate(
                        kind=HeldMemory.Kind.REFLECTION,
                        content=note,
                        reason=HeldMemory.Reason.INJECTION,
                        detail=finding.detail,
                        source_messages=source_messages,
                    )
                )
                continue
            if level != MemoryScope.AGENT or policy == AgentMemoryFromUsers.OPEN:
                getattr(routed.drafts, level).append(note)
            elif policy == AgentMemoryFromUsers.REVIEW:
                routed.held.append(
                    HeldCandidate(
                        kind=HeldMemory.Kind.REFLECTION,
                        content=note,
                        reason=HeldMemory.Reason.AGENT_SCOPE_FROM_USER,
                        detail=_agent_wide_detail(agent),
                        source_messages=source_messages,
                    )
                )
            elif note not in routed.drafts.user:
                routed.drafts.user.append(note)
    return routed


def held_memories_store(
    *, agent: Agent, user: EndUser | None, session: Session | None, held: Sequence[HeldCandidate], origin: str
) -> list[HeldMemory]:
    """Record what was held back, inside the caller's transaction. Injection is rejected at once (decided by the
    rules); the rest waits for an operator."""
    if not held:
        return []
    now = timezone.now()
    rows = HeldMemory.objects.bulk_create(
        [
            HeldMemory(
                agent=agent,
                user=user,
                session=session,
                kind=candidate.kind,
                content=candidate.content,
                reason=candidate.reason,
                detail=candidate.detail[:300],
                origin=origin,
                status=(
                    HeldMemory.Status.REJECTED
                    if candidate.reason == HeldMemory.Reason.INJECTION
                    else HeldMemory.Status.PENDING
                ),
                created_at=now,
                decided_at=now if candidate.reason == HeldMemory.Reason.INJECTION else None,
                decided_by=RULES_DECIDED_BY if candidate.reason == HeldMemory.Reason.INJECTION else "",
                relations=(
                    None if candidate.relations is None else [statement.as_json() for statement in candidate.relations]
                ),
            )
            for candidate in held
        ]
    )
    links = HeldMemory.source_messages.through
    links.objects.bulk_create(
        [
            links(heldmemory_id=row.pk, message_id=message.pk)
            for row, candidate in zip(rows, held, strict=True)
            for message in {message.pk: message for message in candidate.source_messages}.values()
        ]
    )
    webhook_events_record(
        agent_id=agent.pk,
        events=[
            NewWebhookEvent(
                event_type=WebhookEventType.REVIEW_PENDING,
                data=functools.partial(held_memory_event_data, row),
                user_id=row.user_id,
            )
            for row in rows
            if row.status == HeldMemory.Status.PENDING
        ],
    )
    return rows


def held_memory_event_data(held: HeldMemory) -> dict:
    """Memory waiting for review, as webhooks report it: what it is and why it waits (its content is read in the
    console, where an operator decides)."""
    return {
        "agent": held.agent.external_id,
        "user": held.user.external_id if held.user is not None else None,
        "session": held.session.external_id if held.session is not None else None,
        "review": {"kind": "held_memory", "id": held.pk},
        "memory_kind": held.kind,
        "reason": held.reason,
        "origin": held.origin,
    }


@transaction.atomic
def held_memory_store_one(
    *, agent: Agent, user: EndUser | None, session: Session | None, candidate: HeldCandidate, origin: str
) -> HeldMemory:
    return held_memories_store(agent=agent, user=user, session=session, held=[candidate], origin=origin)[0]
