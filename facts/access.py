"""Access tracking of retrieved facts (access_count, last_accessed_at), written off the request path."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Greatest
from django.utils import timezone

from core.queueing import task_enqueue_in_background
from facts.models import Fact


def facts_access_record(*, fact_ids: Sequence[int], accessed_at: datetime) -> int:
    """One UPDATE for the whole batch: concurrent searches add up instead of overwriting each other's counts, and a
    late task never moves last_accessed_at backwards. Returns how many facts it touched."""
    return Fact.objects.filter(pk__in=list(fact_ids)).update(
        access_count=F("access_count") + 1,
        last_accessed_at=Greatest(F("last_accessed_at"), Value(accessed_at)),
    )


def facts_access_record_later(*, fact_ids: Sequence[int]) -> None:
    """Enqueue the access update after the caller's transaction commits, from a background thread: the search's
    response does not wait on the broker. Best effort: a broker outage loses the counts of this read rather than
    failing or slowing it."""
    if not fact_ids:
        return
    from facts.tasks import facts_access_record_task

    ids, accessed_at = list(fact_ids), timezone.now().isoformat()
    transaction.on_commit(lambda: task_enqueue_in_background(facts_access_record_task, ids, accessed_at))
