"""What formation has still to do, and whether the LLM provider lets it: for /health/ and the admin."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import redis
from django.db.models import Count, Min
from django.utils import timezone

from agents.models import Agent
from agents.selectors.agent_settings import agent_daily_token_budget
from conversations.models import Session
from core.llm.guard import BreakerState, llm_breaker_state, provider_key_for
from core.llm.providers import get_llm_provider
from core.llm.spend import llm_spend_today

Status = Session.FormationStatus
Reason = Session.WaitingReason


@dataclass(frozen=True)
class FormationBacklog:
    queued: int
    running: int
    waiting_for_provider: int
    waiting_for_budget: int
    failed: int
    oldest_queued_at: datetime | None
    provider: BreakerState | None  # None: a local provider, or Redis unreachable

    @property
    def oldest_queued_seconds(self) -> float | None:
        return (timezone.now() - self.oldest_queued_at).total_seconds() if self.oldest_queued_at else None

    @property
    def degraded(self) -> bool:
        """Formation is held back by the provider (its breaker is open, or sessions still wait for it)."""
        return bool(self.waiting_for_provider) or (self.provider is not None and self.provider.state != "closed")


def formation_backlog() -> FormationBacklog:
    counts: dict[tuple[str, str], int] = {}
    oldest = None
    rows = (
        Session.objects.exclude(formation_status=Status.IDLE)
        .values("formation_status", "formation_waiting_reason")
        .annotate(n=Count("id"), oldest=Min("formation_queued_at"))
        .order_by()
    )
    for row in rows:
        counts[(row["formation_status"], row["formation_waiting_reason"])] = row["n"]
        if row["formation_status"] == Status.QUEUED:
            oldest = row["oldest"]
    provider = get_llm_provider()
    breaker = None
    if provider.remote:
        try:
            breaker = llm_breaker_state(provider_key=provider_key_for(provider_name=provider.name))
        except redis.RedisError:
            breaker = None

    def count(status: str, reasons: tuple[str, ...] = ("",)) -> int:
        return sum(counts.get((status, reason), 0) for reason in reasons)

    return FormationBacklog(
        queued=count(Status.QUEUED),
        running=count(Status.RUNNING),
        waiting_for_provider=count(Status.WAITING, (Reason.PROVIDER,)),
        waiting_for_budget=count(Status.WAITING, (Reason.AGENT_BUDGET, Reason.GLOBAL_BUDGET)),
        failed=count(Status.FAILED),
        oldest_queued_at=oldest,
        provider=breaker,
    )


def formation_health() -> dict:
    """The /health/ component: "degraded" (still 200) while the provider holds formation back."""
    backlog = formation_backlog()
    oldest = backlog.oldest_queued_seconds
    result: dict = {
        "status": "degraded" if backlog.degraded else "up",
        "queued": backlog.queued,
        "running": backlog.running,
        "waiting_for_provider": backlog.waiting_for_provider,
        "waiting_for_budget": backlog.waiting_for_budget,
        "failed": backlog.failed,
        "oldest_queued_seconds": round(oldest, 1) if oldest is not None else None,
    }
    if backlog.provider is not None:
        result["llm_provider"] = backlog.provider.state
        if backlog.provider.state != "closed":
            result["detail"] = (
                f"the LLM provider is failing: formation paused, next try in {backlog.provider.retry_in_seconds:.0f}s"
            )
    return result


@dataclass(frozen=True)
class AgentSpend:
    agent: Agent
    spent_today: int
    budget: int  # 0: none
    waiting_sessions: int

    @property
    def percent(self) -> int | None:
        return min(100, round(100 * self.spent_today / self.budget)) if self.budget else None


def agents_spend_today() -> list[AgentSpend]:
    """Today's LLM tokens against each agent's budget, most spent first (the admin's budget table)."""
    waiting = dict(
        Session.objects.filter(
            formation_status=Status.WAITING, formation_waiting_reason__in=[Reason.AGENT_BUDGET, Reason.GLOBAL_BUDGET]
        )
        .values("agent_id")
        .annotate(n=Count("id"))
        .values_list("agent_id", "n")
        .order_by()
    )
    spends = [
        AgentSpend(
            agent=agent,
            spent_today=llm_spend_today(agent_id=agent.pk),
            budget=agent_daily_token_budget(agent=agent),
            waiting_sessions=waiting.get(agent.pk, 0),
        )
        for agent in Agent.objects.order_by("external_id")
    ]
    return sorted(spends, key=lambda spend: (-spend.spent_today, spend.agent.external_id))
