"""The conversations app's own metric families (core.observability.metrics has the generic ones): messages ingested
and formation jobs by outcome, counted where they happen. The gauges of formation and review state are read at scrape
time (conversations/selectors/operations_metrics.py)."""

from __future__ import annotations

from django.db import transaction
from prometheus_client import Counter, Histogram

from core.observability.metrics import NAMESPACE, TASK_BUCKETS, metrics_enabled

ingested_messages = Counter(
    "ingested_messages",
    "Messages stored by ingestion (API appends and the chat proxy), by role; rate() gives messages per second.",
    ["role"],
    namespace=NAMESPACE,
)
formation_jobs = Counter(
    "formation_jobs",
    "Formation runs that ended, by trigger (interval, cold, closed, explicit, sweep, resumed) and outcome (succeeded, "
    "failed, retrying: failed and queued again, paused: the provider's breaker opened during the run).",
    ["trigger", "outcome"],
    namespace=NAMESPACE,
)
formation_job_duration = Histogram(
    "formation_job_duration_seconds",
    "Time of formation runs from claim to end, by outcome.",
    ["outcome"],
    namespace=NAMESPACE,
    buckets=TASK_BUCKETS,
)

ROLES = frozenset({"user", "assistant", "tool", "system"})
TRIGGERS = frozenset({"interval", "cold", "closed", "explicit", "sweep", "resumed"})


def messages_ingested_count(*, roles: list[str]) -> None:
    """Counted once the append commits (a rolled-back append stored nothing)."""
    if not metrics_enabled():
        return

    def count() -> None:
        for role in roles:
            ingested_messages.labels(role if role in ROLES else "other").inc()

    transaction.on_commit(count)


def formation_job_count(*, trigger: str, outcome: str, seconds: float) -> None:
    """Counted once the job's end commits."""
    if not metrics_enabled():
        return

    def count() -> None:
        formation_jobs.labels(trigger if trigger in TRIGGERS else "other", outcome).inc()
        formation_job_duration.labels(outcome).observe(max(0.0, seconds))

    transaction.on_commit(count)
