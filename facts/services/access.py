"""Access tracking of retrieved facts (access_count, last_accessed_at), off the read path.

A search appends one entry (its time and the returned fact ids) to a Redis list from a background thread; the
`facts-access-fold` beat job folds the entries into the facts with one UPDATE per batch. One Celery task per search,
as before, cost the machine ~6 ms of worker CPU and ~10 ms of PostgreSQL per search: with the web's share of the
publishing, half of a search's CPU at 10k facts on two cores (docs/benchmarks/history.md, section 2). Counts are best
effort, as they were: an entry lost to a Redis outage or to a fold that dies between taking entries and writing them
is an access not counted, never a search failed or slowed. Retention reads access times in days; a fold every 10 s
is far inside that."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import cache
from typing import cast

import redis
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Value
from django.db.models.functions import Greatest
from django.utils import timezone

from core.runtime.queueing import call_in_background
from facts.models import Fact

ACCESS_LOG_KEY = "memory:facts:access-log"


@cache
def _access_log() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)


def facts_access_record(*, fact_ids: Sequence[int], accessed_at: datetime) -> int:
    """One UPDATE for the whole batch: concurrent searches add up instead of overwriting each other's counts, and a
    late record never moves last_accessed_at backwards. Returns how many facts it touched."""
    return Fact.objects.filter(pk__in=list(fact_ids)).update(
        access_count=F("access_count") + 1,
        last_accessed_at=Greatest(F("last_accessed_at"), Value(accessed_at)),
    )


def _access_log_append(entry: str) -> None:
    with _access_log().pipeline(transaction=False) as pipeline:
        pipeline.rpush(ACCESS_LOG_KEY, entry)
        # Bounded while nothing folds (beat stopped): the oldest entries go first.
        pipeline.ltrim(ACCESS_LOG_KEY, -settings.FACTS_ACCESS_LOG_MAX_ENTRIES, -1)
        pipeline.execute()


def facts_access_record_later(*, fact_ids: Sequence[int]) -> None:
    """Log the access after the caller's transaction commits, from a background thread: the search's response waits
    on nothing."""
    if not fact_ids:
        return
    entry = f"{timezone.now().isoformat()}|{','.join(str(fact_id) for fact_id in fact_ids)}"
    transaction.on_commit(lambda: call_in_background(_access_log_append, entry, what="logging fact accesses"))


def facts_accesses_fold(*, batch_size: int = 5_000) -> int:
    """Apply the logged accesses: per batch of entries, each fact's count of them and latest time in one UPDATE.
    Returns how many entries it applied."""
    applied = 0
    while entries := _access_log().lpop(ACCESS_LOG_KEY, batch_size):
        counts: dict[int, int] = {}
        latest: dict[int, datetime] = {}
        # With a count LPOP returns a list, of bytes (the client does not decode).
        for entry in cast(list[bytes], entries):
            at_text, _, ids_text = entry.decode().partition("|")
            at = datetime.fromisoformat(at_text)
            for fact_id in map(int, ids_text.split(",")):
                counts[fact_id] = counts.get(fact_id, 0) + 1
                latest[fact_id] = max(latest.get(fact_id, at), at)
        ids = list(counts)
        with connection.cursor() as cursor:
            cursor.execute(
                """
                UPDATE facts_fact AS fact
                SET access_count = fact.access_count + accessed.times,
                    last_accessed_at = greatest(fact.last_accessed_at, accessed.latest)
                FROM unnest(%s::bigint[], %s::integer[], %s::timestamptz[]) AS accessed(fact_id, times, latest)
                WHERE fact.id = accessed.fact_id
                """,
                [ids, [counts[i] for i in ids], [latest[i] for i in ids]],
            )
        applied += len(entries)
    return applied
