"""The review queue as operators see it: held memories per agent and how long the oldest has waited."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db.models import Count, Min
from django.utils import timezone

from agents.models import Agent
from formation.models import HeldMemory


@dataclass(frozen=True)
class AgentReviewQueue:
    agent: Agent
    pending: int
    oldest_pending_at: datetime
    rejected_by_rules: int = 0


def review_queue_by_agent() -> list[AgentReviewQueue]:
    """Agents with memory waiting for review, longest waiting first, with the injection rejected for each."""
    pending = {
        row["agent"]: row
        for row in HeldMemory.objects.filter(status=HeldMemory.Status.PENDING)
        .order_by()
        .values("agent")
        .annotate(count=Count("id"), oldest=Min("created_at"))
    }
    if not pending:
        return []
    rejected = dict(
        HeldMemory.objects.filter(agent__in=list(pending), reason=HeldMemory.Reason.INJECTION)
        .order_by()
        .values("agent")
        .annotate(count=Count("id"))
        .values_list("agent", "count")
    )
    agents = Agent.objects.in_bulk(list(pending))
    queues = [
        AgentReviewQueue(
            agent=agents[agent_id],
            pending=row["count"],
            oldest_pending_at=row["oldest"],
            rejected_by_rules=rejected.get(agent_id, 0),
        )
        for agent_id, row in pending.items()
    ]
    return sorted(queues, key=lambda queue: queue.oldest_pending_at)


def review_queue_health() -> dict:
    """The /health/ component: "degraded" (still 200) while memory has waited longer than MEMORY_REVIEW_MAX_AGE_HOURS
    for an operator."""
    summary = HeldMemory.objects.filter(status=HeldMemory.Status.PENDING).aggregate(
        pending=Count("id"), oldest=Min("created_at")
    )
    oldest_hours = (timezone.now() - summary["oldest"]).total_seconds() / 3600 if summary["oldest"] else None
    overdue = oldest_hours is not None and oldest_hours > settings.MEMORY_REVIEW_MAX_AGE_HOURS
    result: dict = {
        "status": "degraded" if overdue else "up",
        "pending": summary["pending"],
        "oldest_pending_hours": round(oldest_hours, 1) if oldest_hours is not None else None,
    }
    if overdue:
        result["detail"] = (
            f"memory has waited {oldest_hours:.0f} h for review (over {settings.MEMORY_REVIEW_MAX_AGE_HOURS} h): "
            "admin > held memories"
        )
    return result
