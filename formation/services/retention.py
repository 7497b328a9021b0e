"""Retention: expired facts closed (they left search when their expiry passed; here they become history, reason
"expired"), and per-agent caps on current facts per user and agent-wide, and on embedded messages per session.
The caps are off unless an agent sets one. Evicted facts are closed (never destroyed), least recently accessed and
oldest first; pinned facts are never evicted. Message vectors beyond the cap are dropped (oldest first): the messages
stay, they only leave turn-level retrieval."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Count, F, Q, QuerySet
from django.utils import timezone

from agents.models import Agent
from conversations.models import MessageEmbedding
from core.embeddings.spaces import embedding_space_active
from facts.models import Fact
from facts.services.facts import fact_close, facts_expired_close
from formation.models import RetentionRun

EXPIRED_BATCH = 1000
EVICTION_REASON = "retention: over the agent's cap of {cap} current facts {where}"


def _evict(*, facts: QuerySet, cap: int, where: str) -> int:
    excess = facts.count() - cap
    if excess <= 0:
        return 0
    victims = facts.filter(pinned=False).order_by(F("last_accessed_at").asc(nulls_first=True), "formed_at", "id")
    closed = 0
    for fact in victims[:excess]:
        fact_close(fact=fact, reason=EVICTION_REASON.format(cap=cap, where=where))
        closed += 1
    return closed


def _drop_message_vectors(*, agent: Agent, cap: int) -> int:
    space = embedding_space_active()
    over = (
        MessageEmbedding.objects.filter(agent=agent, space=space)
        .values("session_id")
        .annotate(n=Count("id"))
        .filter(n__gt=cap)
    )
    dropped = 0
    for row in over:
        keep = (
            MessageEmbedding.objects.filter(space=space, session_id=row["session_id"])
            .order_by("-message_id")
            .values_list("id", flat=True)[:cap]
        )
        dropped += (
            MessageEmbedding.objects.filter(space=space, session_id=row["session_id"]).exclude(id__in=list(keep))
        ).delete()[0]
    return dropped


def retention_enforce(*, agent: Agent) -> RetentionRun | None:
    """One pass over an agent's caps; None when the agent has none. Each eviction is its own small transaction
    (fact_close), so a pass that stops half-way leaves a consistent store and the next pass finishes it."""
    caps = (
        agent.max_current_facts_per_user,
        agent.max_current_facts_per_agent,
        agent.max_embedded_messages_per_session,
    )
    if all(cap is None for cap in caps):
        return None
    run = RetentionRun.objects.create(agent=agent)
    current = Fact.objects.filter(agent=agent, valid_to__isnull=True)
    if agent.max_current_facts_per_user is not None:
        cap = agent.max_current_facts_per_user
        crowded = current.filter(user__isnull=False).values("user_id").annotate(n=Count("id")).filter(n__gt=cap)
        for row in crowded:
            run.facts_closed += _evict(facts=current.filter(user_id=row["user_id"]), cap=cap, where="per user")
    if agent.max_current_facts_per_agent is not None:
        run.facts_closed += _evict(
            facts=current.filter(user__isnull=True), cap=agent.max_current_facts_per_agent, where="agent-wide"
        )
    if agent.max_embedded_messages_per_session is not None:
        with transaction.atomic():
            run.message_embeddings_dropped = _drop_message_vectors(
                agent=agent, cap=agent.max_embedded_messages_per_session
            )
    run.finished_at = timezone.now()
    run.save(update_fields=["facts_closed", "message_embeddings_dropped", "finished_at"])
    return run


def retention_enforce_all() -> dict[str, int]:
    """Every agent's pass: the expired facts of all agents closed, then each agent's caps. Returns what it did."""
    expired_closed = 0
    while closed := facts_expired_close(limit=EXPIRED_BATCH):
        expired_closed += closed
    agents = Agent.objects.filter(
        Q(max_current_facts_per_user__isnull=False)
        | Q(max_current_facts_per_agent__isnull=False)
        | Q(max_embedded_messages_per_session__isnull=False)
    )
    totals = {"expired_facts_closed": expired_closed, "agents": 0, "facts_closed": 0, "message_embeddings_dropped": 0}
    for agent in agents:
        run = retention_enforce(agent=agent)
        if run is not None:
            totals["agents"] += 1
            totals["facts_closed"] += run.facts_closed
            totals["message_embeddings_dropped"] += run.message_embeddings_dropped
    return totals
