"""LLM cost and failure figures per agent, read from LLMCall rows, for the admin's usage page."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.db.models import Avg, Count, Q, QuerySet, Sum
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


@dataclass(frozen=True)
class StepValidity:
    """How one formation step's replies fared: valid (parsed and passed validation, perhaps on the retry), malformed
    (each malformed reply counts, the retry's too), and valid replies that broke a rule of the prompt."""

    step: str
    replies: int
    valid: int
    with_violations: int
    violations: dict[str, int]

    @property
    def purpose(self) -> str:
        """The LLMCall purpose of the step's calls."""
        return "consolidate" if self.step == SUMMARY_STEP else self.step

    @property
    def valid_percent(self) -> float:
        return 100.0 * self.valid / self.replies if self.replies else 0.0

    @property
    def violating_percent(self) -> float:
        return 100.0 * self.with_violations / self.valid if self.valid else 0.0


# Consolidation of a session's buffer is its summary: a step of its own for the figures.
SUMMARY_STEP = "summarize_session"
# job kind -> a function telling, of that kind's job ids, which run a step other than their calls' purpose (core knows
# no app's jobs: reflections registers that a session's consolidation is its summary).
_JOB_STEPS: dict[str, Callable[[QuerySet], dict[int, str]]] = {}


def llm_job_steps_register(job_kind: str, steps_of: Callable[[QuerySet], dict[int, str]]) -> None:
    """`steps_of(job_ids)` (a queryset of job ids of `job_kind`) returns {job id: step} for the jobs whose calls count
    as another step than their purpose."""
    _JOB_STEPS[job_kind] = steps_of


def llm_reply_validity(*, since: datetime, agent_id: int | None = None) -> list[StepValidity]:
    """Per step (LLM call purpose; session consolidations apart, as summaries), the replies the model gave since
    `since`: calls without a reply (provider errors, 429s) do not count."""
    calls = LLMCall.objects.filter(created_at__gte=since, outcome__in=[LLMCall.Outcome.OK, LLMCall.Outcome.MALFORMED])
    if agent_id is not None:
        calls = calls.filter(agent_id=agent_id)
    job_steps: dict[tuple[str, int | None], str] = {
        (job_kind, job_id): step
        for job_kind, steps_of in _JOB_STEPS.items()
        for job_id, step in steps_of(calls.filter(job_kind=job_kind).values("job_id")).items()
    }
    tallies: dict[str, dict] = {}
    for purpose, job_kind, job_id, outcome, violations in calls.values_list(
        "purpose", "job_kind", "job_id", "outcome", "rule_violations"
    ).iterator():
        step = job_steps.get((job_kind, job_id), purpose)
        tally = tallies.setdefault(step, {"replies": 0, "valid": 0, "with_violations": 0, "violations": {}})
        tally["replies"] += 1
        if outcome == LLMCall.Outcome.OK:
            tally["valid"] += 1
            tally["with_violations"] += bool(violations)
            for rule, count in violations.items():
                tally["violations"][rule] = tally["violations"].get(rule, 0) + count
    return [StepValidity(step=step, **tally) for step, tally in sorted(tallies.items())]
