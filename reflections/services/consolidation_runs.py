"""Consolidation on request (the consolidate command, operators): run it in this process or queue it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from core.runtime.queueing import task_enqueue_safely
from reflections import task_names as reflections_tasks
from reflections.services.consolidation import ScopeKey, scope_consolidate


@dataclass
class ScopeConsolidationResult:
    key: ScopeKey
    outcome: str  # consolidated, queued, nothing (empty buffer, nothing to summarise), failed
    version: int | None = None
    reflections: int = 0
    error: str = ""


def scopes_consolidate(*, keys: Iterable[ScopeKey], force: bool, queue: bool) -> list[ScopeConsolidationResult]:
    """Consolidate each scope now or queue it. `force` consolidates a buffer below its threshold (an explicit
    request); without it only due scopes change."""
    results = []
    for key in keys:
        if queue:
            if task_enqueue_safely(reflections_tasks.CONSOLIDATE_SCOPE, *key.as_task_args(), force):
                results.append(ScopeConsolidationResult(key=key, outcome="queued"))
            else:
                results.append(ScopeConsolidationResult(key=key, outcome="failed", error="the broker is unreachable"))
            continue
        try:
            job = scope_consolidate(key=key, force=force)
        except Exception as error:  # recorded on the failed ConsolidationJob; the other scopes still run
            results.append(
                ScopeConsolidationResult(key=key, outcome="failed", error=f"{type(error).__name__}: {error}")
            )
            continue
        if job is None:
            results.append(ScopeConsolidationResult(key=key, outcome="nothing"))
        else:
            results.append(
                ScopeConsolidationResult(
                    key=key, outcome="consolidated", version=job.produced_version, reflections=job.reflections_count
                )
            )
    return results
