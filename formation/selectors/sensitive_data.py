"""What the sensitive-data rules kept out of memory, per agent, for the admin. A finding of a formation or
consolidation job counts once its job succeeded: a failed job stored nothing, and its retry finds the secret again."""

from __future__ import annotations

from collections import Counter

from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from core.models import JobStatus, SensitiveDataFinding
from formation.models import FormationJob
from reflections.models import ConsolidationJob


def sensitive_findings_counted() -> QuerySet[SensitiveDataFinding]:
    succeeded = {
        "formation": FormationJob.objects.filter(pk=OuterRef("job_id"), status=JobStatus.SUCCEEDED),
        "consolidation": ConsolidationJob.objects.filter(pk=OuterRef("job_id"), status=JobStatus.SUCCEEDED),
    }
    return SensitiveDataFinding.objects.alias(
        formation_succeeded=Exists(succeeded["formation"]),
        consolidation_succeeded=Exists(succeeded["consolidation"]),
    ).filter(
        Q(job_kind="")
        | Q(job_kind="formation", formation_succeeded=True)
        | Q(job_kind="consolidation", consolidation_succeeded=True)
    )


def sensitive_data_counts(*, agent_id: int) -> Counter:
    """(kind, action) -> how many secrets."""
    rows = (
        sensitive_findings_counted()
        .filter(agent_id=agent_id)
        .values("kind", "action")
        .annotate(n=Count("id"))
        .values_list("kind", "action", "n")
    )
    return Counter({(kind, action): n for kind, action, n in rows})
