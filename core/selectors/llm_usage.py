"""LLM cost and failure figures per agent, read from LLMCall rows, for the admin's usage page."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.db.models import Avg, Count, Q, Sum
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone

from core.models import LLMCall

FAILED = ~Q(outcome=LLMCall.Outcome.OK)


@dataclass(frozen=True)
class AgentLLMUsage:
    agent_id: int | None
    agent_label: str
    calls: int
    failures: int
    prompt_tokens: int
    completion_tokens: int
    average_latency_ms: float

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class DailyLLMUsage:
    day: date
    calls: int
    failures: int
    total_tokens: int

    @property
    def succeeded(self) -> int:
        return self.calls - self.failures


@dataclass(frozen=True)
class LLMUsageWindow:
    label: str
    since: datetime
    agents: list[AgentLLMUsage]

    @property
    def calls(self) -> int:
        return sum(agent.calls for agent in self.agents)

    @property
    def failures(self) -> int:
        return sum(agent.failures for agent in self.agents)

    @property
    def total_tokens(self) -> int:
        return sum(agent.total_tokens for agent in self.agents)

    @property
    def most_tokens(self) -> int:
        """The largest per-agent token total: the full length of a bar in the chart."""
        return max((agent.total_tokens for agent in self.agents), default=0)


def llm_usage_by_agent(*, since: datetime, agent_id: int | None = None) -> list[AgentLLMUsage]:
    """Calls, failures (any outcome but ok), tokens and mean latency per agent since `since`, most tokens first.
    Calls made outside any agent (none today, but the column allows it) are grouped under agent None."""
    calls = LLMCall.objects.filter(created_at__gte=since)
    if agent_id is not None:
        calls = calls.filter(agent_id=agent_id)
    rows = (
        calls.values("agent_id", "agent__name", "agent__external_id")
        .annotate(
            calls=Count("id"),
            failures=Count("id", filter=FAILED),
            prompt_tokens=Coalesce(Sum("prompt_tokens"), 0),
            completion_tokens=Coalesce(Sum("completion_tokens"), 0),
            average_latency_ms=Coalesce(Avg("latency_ms"), 0.0),
        )
        .order_by()
    )
    usages = [
        AgentLLMUsage(
            agent_id=row["agent_id"],
            agent_label=row["agent__name"] or row["agent__external_id"] or "(no agent)",
            calls=row["calls"],
            failures=row["failures"],
            prompt_tokens=row["prompt_tokens"],
            completion_tokens=row["completion_tokens"],
            average_latency_ms=float(row["average_latency_ms"]),
        )
        for row in rows
    ]
    return sorted(usages, key=lambda usage: (-usage.total_tokens, -usage.calls, usage.agent_label))


def llm_usage_daily(*, days: int, now: datetime | None = None, agent_id: int | None = None) -> list[DailyLLMUsage]:
    """One entry per calendar day (UTC) of the last `days` days, today included, oldest first; days without calls
    are zeros so that a chart shows the gap."""
    today = (now or timezone.now()).date()
    first_day = today - timedelta(days=days - 1)
    calls = LLMCall.objects.filter(created_at__date__gte=first_day)
    if agent_id is not None:
        calls = calls.filter(agent_id=agent_id)
    rows: dict[date, Mapping[str, Any]] = {
        row["day"]: row
        for row in calls.annotate(day=TruncDate("created_at"))
        .values("day")
        .annotate(
            calls=Count("id"),
            failures=Count("id", filter=FAILED),
            total_tokens=Coalesce(Sum("prompt_tokens"), 0) + Coalesce(Sum("completion_tokens"), 0),
        )
        .order_by()
    }
    usage = []
    for offset in range(days):
        day = first_day + timedelta(days=offset)
        row = rows.get(day, {})
        usage.append(
            DailyLLMUsage(
                day=day,
                calls=row.get("calls", 0),
                failures=row.get("failures", 0),
                total_tokens=row.get("total_tokens", 0),
            )
        )
    return usage


def llm_usage_windows(*, now: datetime | None = None, agent_id: int | None = None) -> list[LLMUsageWindow]:
    """The last day and the last week, per agent."""
    now = now or timezone.now()
    return [
        LLMUsageWindow(label=label, since=now - span, agents=llm_usage_by_agent(since=now - span, agent_id=agent_id))
        for label, span in (("last 24 hours", timedelta(days=1)), ("last 7 days", timedelta(days=7)))
    ]


@dataclass(frozen=True)
class UsageAgent:
    pk: int
    label: str

    def __str__(self) -> str:
        return self.label


def llm_usage_agents() -> list[UsageAgent]:
    """The agents that made LLM calls, for the usage page's filter (read through the calls, which name their agent)."""
    rows = (
        LLMCall.objects.filter(agent__isnull=False)
        .values_list("agent_id", "agent__name", "agent__external_id")
        .distinct()
        .order_by("agent__external_id")
    )
    return [UsageAgent(pk=pk, label=name or external_id) for pk, name, external_id in rows]
