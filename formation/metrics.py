"""The formation app's own metric families (core.observability.metrics has the generic ones): formation jobs by
trigger and outcome, counted where they end. The gauges of formation and review state are read at scrape time
(formation/selectors/operations_metrics.py)."""

from __future__ import annotations

from django.db import transaction
from prometheus_client import Counter, Histogram

from core.observability.metrics import NAMESPACE, TASK_BUCKETS, metrics_enabled

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

TRIGGERS = frozenset({"interval", "cold", "closed", "explicit", "sweep", "resumed"})


def formation_job_count(*, trigger: str, outcome: str, seconds: float) -> None:
    """Counted once the job's end commits."""
    if not metrics_enabled():
        return

    def count() -> None:
        formation_jobs.labels(trigger if trigger in TRIGGERS else "other", outcome).inc()
        formation_job_duration.labels(outcome).observe(max(0.0, seconds))

    transaction.on_commit(count)
