"""The gauges of formation and review that /metrics reads at scrape time (registered in FormationConfig.ready):
backlog by status and waiting reason, formation lag, the provider's circuit breaker, today's LLM spend against the
budgets and the review queue. Each is an aggregate query or two (or a Redis read), so a scrape every 15 s costs the
database little; docs/operations/reference.md says what each means."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import redis
from django.conf import settings
from django.db.models import Count, F, Min, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily, Metric

from agents.models import Agent
from conversations.models import Message, Session
from core.llm.guard import llm_breaker_state, provider_key_for
from core.llm.providers import get_llm_provider
from core.llm.spend import llm_spend_today
from core.observability.metrics import NAMESPACE
from formation.models import HeldMemory
from formation.selectors.formation_backlog import agents_spend_today

Status = Session.FormationStatus
BREAKER_STATES = ("closed", "half-open", "open")
# How many of the idle sessions longest without activity the lag looks at: they are read in the order of the
# (formation_status, last_activity_at) index, so the scrape reads at most this many rows.
LAG_CANDIDATES = 200


def _or_default(override: int | None, default: int) -> int:
    return override if override is not None else default


def _gauge(name: str, documentation: str, labels: list[str] | None = None) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"{NAMESPACE}_{name}", documentation, labels=labels)


def _formation_backlog() -> GaugeMetricFamily:
    family = _gauge(
        "formation_backlog_sessions",
        "Sessions with formation not idle, by status (queued, running, waiting, failed) and, for waiting ones, the "
        "reason (agent_budget, global_budget, provider).",
        ["status", "reason"],
    )
    counts: dict[tuple[str, str], int] = {(status, ""): 0 for status in (Status.QUEUED, Status.RUNNING, Status.FAILED)}
    counts |= {(Status.WAITING, reason): 0 for reason in Session.WaitingReason.values if reason}
    rows = (
        Session.objects.exclude(formation_status=Status.IDLE)
        .values("formation_status", "formation_waiting_reason")
        .annotate(n=Count("id"))
        .order_by()
    )
    for row in rows:
        status = row["formation_status"]
        key = (status, row["formation_waiting_reason"] if status == Status.WAITING else "")
        counts[key] = counts.get(key, 0) + row["n"]
    for (status, reason), count in sorted(counts.items()):
        family.add_metric([status, reason or "none"], count)
    return family


def formation_lag_seconds(*, now: datetime | None = None) -> float:
    """How long the session that has waited longest for due formation has waited: a queued session since it was
    queued, a cold one (idle past its agent's cold-after minutes, with at least its minimum of unformed messages)
    since it went cold and no sweep queued it. 0 when nothing is due. Sessions waiting for a budget or the provider
    are not lag (the backlog and the breaker show them), nor are failed ones (the backlog's failed count)."""
    now = now or timezone.now()
    lag = 0.0
    oldest_queued = Session.objects.filter(formation_status=Status.QUEUED).aggregate(oldest=Min("formation_queued_at"))
    if oldest_queued["oldest"] is not None:
        lag = (now - oldest_queued["oldest"]).total_seconds()
    shortest_cold = Agent.objects.aggregate(
        minutes=Min(Coalesce("cold_after_minutes", Value(settings.CONSIDER_COLD_AFTER_MINUTES)))
    )["minutes"]
    if shortest_cold is None:
        return max(lag, 0.0)
    # Activity after the last formation: the only idle sessions that can hold unformed messages.
    idle_before = now - timedelta(minutes=shortest_cold)
    candidates = (
        Session.objects.filter(formation_status=Status.IDLE, last_activity_at__lt=idle_before)
        .filter(Q(last_formed_at__isnull=True) | Q(last_formed_at__lt=F("last_activity_at")))
        .select_related("agent")
        .order_by("last_activity_at")[:LAG_CANDIDATES]
    )
    for session in candidates:
        agent = session.agent
        cold_after = timedelta(minutes=_or_default(agent.cold_after_minutes, settings.CONSIDER_COLD_AFTER_MINUTES))
        cold_since = session.last_activity_at + cold_after
        if cold_since >= now:
            continue
        needed = _or_default(agent.min_messages_for_formation, settings.NEVER_FORM_MEMORIES_LESS_THAN_N_MESSAGES)
        unformed = Message.objects.filter(session=session, id__gt=session.formed_through_message_id or 0)[:needed]
        if unformed.count() >= needed:
            return max(lag, (now - cold_since).total_seconds())
    return max(lag, 0.0)


def _breaker() -> Iterator[Metric]:
    provider = get_llm_provider()
    if not provider.remote:
        return
    family = _gauge(
        "llm_circuit_breaker_state",
        "The LLM provider's circuit breaker: 1 for its current state (closed, half-open, open), 0 for the others.",
        ["provider", "state"],
    )
    try:
        state = llm_breaker_state(provider_key=provider_key_for(provider_name=provider.name)).state
    except redis.RedisError:
        return
    for name in BREAKER_STATES:
        family.add_metric([provider.name, name], 1 if name == state else 0)
    yield family


def _spend() -> Iterator[Metric]:
    spent = _gauge("llm_spent_today_tokens", "LLM tokens spent today (UTC) by memory work, all agents.")
    spent.add_metric([], llm_spend_today(agent_id=None))
    yield spent
    budget = _gauge("llm_daily_budget_tokens", "The deployment's daily LLM token budget (0: none).")
    budget.add_metric([], settings.LLM_DAILY_TOKEN_BUDGET)
    yield budget
    agents = _gauge(
        "llm_agent_budget_used_ratio",
        "Share of its daily LLM token budget an agent has spent today, for the METRICS_MAX_AGENT_SERIES agents with a "
        "budget nearest to it (label: the agent's external id; never a user's).",
        ["agent"],
    )
    with_budget = [spend for spend in agents_spend_today() if spend.budget]
    with_budget.sort(key=lambda spend: (-spend.spent_today / spend.budget, spend.agent.external_id))
    for spend in with_budget[: settings.METRICS_MAX_AGENT_SERIES]:
        agents.add_metric([spend.agent.external_id], spend.spent_today / spend.budget)
    yield agents


def formation_metrics() -> Iterator[Metric]:
    yield _formation_backlog()
    lag = _gauge(
        "formation_lag_seconds",
        "How long the longest-waiting due session has waited for formation (queued, or cold and not yet queued).",
    )
    lag.add_metric([], formation_lag_seconds())
    yield lag
    yield from _breaker()
    yield from _spend()


def review_queue_metrics() -> Iterator[Metric]:
    summary = HeldMemory.objects.filter(status=HeldMemory.Status.PENDING).aggregate(
        pending=Count("id"), oldest=Min("created_at")
    )
    pending = _gauge("review_queue_pending", "Held memories waiting for an operator's decision (the review queue).")
    pending.add_metric([], summary["pending"])
    yield pending
    age = _gauge("review_queue_oldest_age_seconds", "How long the oldest held memory has waited for review (0: none).")
    age.add_metric([], (timezone.now() - summary["oldest"]).total_seconds() if summary["oldest"] else 0)
    yield age
