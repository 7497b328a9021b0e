"""Returned facts get access_count and last_accessed_at updated off the read path: a search logs its hits in Redis
after commit, from a background thread, and the fold (a beat job on the worker) applies the log."""

import time
from datetime import timedelta

import pytest
from django.utils import timezone

import facts.services.access
from facts.models import Fact
from facts.selectors import facts_search
from facts.services.access import ACCESS_LOG_KEY, facts_access_record, facts_access_record_later, facts_accesses_fold
from facts.services.facts import fact_create
from facts.tasks import facts_accesses_fold_task


@pytest.mark.django_db
def test_one_update_counts_each_access_and_never_moves_the_time_back(agent):
    fact = fact_create(agent=agent, user=None, scopes=["agent"], content="The shop opens at nine")
    now = timezone.now()

    assert facts_access_record(fact_ids=[fact.pk], accessed_at=now) == 1
    facts_access_record(fact_ids=[fact.pk], accessed_at=now - timedelta(minutes=5))

    fact.refresh_from_db()
    assert fact.access_count == 2 and fact.last_accessed_at == now


@pytest.fixture
def access_log():
    """The access log, emptied first: other tests' searches log their hits too."""
    log = facts.services.access._access_log()
    log.delete(ACCESS_LOG_KEY)
    return log


def _logged(log, entries: int) -> None:
    deadline = time.monotonic() + 10
    while log.llen(ACCESS_LOG_KEY) < entries and time.monotonic() < deadline:
        time.sleep(0.05)
    assert log.llen(ACCESS_LOG_KEY) == entries


@pytest.mark.django_db(transaction=True)
def test_search_hits_are_logged_then_counted_by_the_workers_fold(agent, end_user, access_log, celery_worker_process):
    hit = fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene's licence plate is QX-4471")
    missed = fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene plays the cello")
    for content in ("Gene is vegetarian", "Gene lives in Lisbon", "Gene's sister is Ana", "Gene runs marathons"):
        fact_create(agent=agent, user=end_user, scopes=["user"], content=content)

    hits = facts_search(agent=agent, user=end_user, query="QX-4471", mode="text")
    facts_search(agent=agent, user=end_user, query="QX-4471", mode="text")

    assert [h.fact for h in hits] == [hit]
    _logged(access_log, 2)
    assert Fact.objects.get(pk=hit.pk).access_count == 0  # nothing written on the read path
    assert facts_accesses_fold_task.delay().get(timeout=60) == 2
    hit.refresh_from_db()
    assert hit.access_count == 2 and hit.last_accessed_at is not None
    assert Fact.objects.get(pk=missed.pk).access_count == 0
    assert access_log.llen(ACCESS_LOG_KEY) == 0


@pytest.mark.django_db
def test_the_fold_adds_every_entry_keeps_the_latest_time_and_skips_facts_gone(agent, access_log):
    first = fact_create(agent=agent, user=None, scopes=["agent"], content="The shop opens at nine")
    second = fact_create(agent=agent, user=None, scopes=["agent"], content="The shop closes at six")
    gone = fact_create(agent=agent, user=None, scopes=["agent"], content="The shop sells bread")
    Fact.objects.filter(pk=first.pk).update(access_count=5, last_accessed_at=timezone.now() + timedelta(days=1))
    gone_id = gone.pk
    gone.delete()
    now = timezone.now()
    entries = [(now - timedelta(minutes=2), [first.pk, second.pk]), (now, [second.pk, gone_id]), (now, [second.pk])]
    for at, ids in entries:
        access_log.rpush(ACCESS_LOG_KEY, f"{at.isoformat()}|{','.join(map(str, ids))}")

    assert facts_accesses_fold(batch_size=2) == 3  # two batches

    first.refresh_from_db()
    second.refresh_from_db()
    assert first.access_count == 6 and first.last_accessed_at > now  # a later time already stored stays
    assert second.access_count == 3 and second.last_accessed_at == now
    assert facts_accesses_fold() == 0


@pytest.mark.django_db
def test_the_log_is_capped_while_nothing_folds_it(agent, access_log, settings, django_capture_on_commit_callbacks):
    settings.FACTS_ACCESS_LOG_MAX_ENTRIES = 3
    fact = fact_create(agent=agent, user=None, scopes=["agent"], content="The shop opens at nine")

    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(5):
            facts_access_record_later(fact_ids=[fact.pk])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and facts.services.access._access_log().llen(ACCESS_LOG_KEY) != 3:
        time.sleep(0.05)
    time.sleep(0.2)  # the background thread's last appends

    assert access_log.llen(ACCESS_LOG_KEY) == 3
    assert facts_accesses_fold() == 3


@pytest.mark.django_db
def test_operator_searches_do_not_count_as_the_agent_using_memory(agent, end_user, django_capture_on_commit_callbacks):
    fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene's licence plate is QX-4471")

    with django_capture_on_commit_callbacks() as operator_callbacks:
        facts_search(agent=agent, user=end_user, query="QX-4471", mode="text", record_access=False)
    with django_capture_on_commit_callbacks() as agent_callbacks:
        facts_search(agent=agent, user=end_user, query="QX-4471", mode="text")

    assert (len(operator_callbacks), len(agent_callbacks)) == (0, 1)
