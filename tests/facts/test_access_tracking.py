"""Returned facts get access_count and last_accessed_at updated by a Celery task after commit, off the read path."""

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from facts.access import facts_access_record
from facts.models import Fact
from facts.selectors import facts_search
from facts.services import fact_create


@pytest.mark.django_db
def test_one_update_counts_each_access_and_never_moves_the_time_back(agent):
    fact = fact_create(agent=agent, user=None, scopes=["agent"], content="The shop opens at nine")
    now = timezone.now()

    assert facts_access_record(fact_ids=[fact.pk], accessed_at=now) == 1
    facts_access_record(fact_ids=[fact.pk], accessed_at=now - timedelta(minutes=5))

    fact.refresh_from_db()
    assert fact.access_count == 2 and fact.last_accessed_at == now


@pytest.mark.django_db(transaction=True)
def test_search_hits_are_counted_by_the_worker(agent, end_user, celery_worker_process):
    hit = fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene's licence plate is QX-4471")
    missed = fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene plays the cello")
    for content in ("Gene is vegetarian", "Gene lives in Lisbon", "Gene's sister is Ana", "Gene runs marathons"):
        fact_create(agent=agent, user=end_user, scopes=["user"], content=content)

    hits = facts_search(agent=agent, user=end_user, query="QX-4471", mode="text")

    assert [h.fact for h in hits] == [hit]
    deadline = time.monotonic() + 60
    while Fact.objects.get(pk=hit.pk).access_count == 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    hit.refresh_from_db()
    assert hit.access_count == 1 and hit.last_accessed_at is not None
    assert Fact.objects.get(pk=missed.pk).access_count == 0


@pytest.mark.django_db
def test_operator_searches_do_not_count_as_the_agent_using_memory(agent, end_user, django_capture_on_commit_callbacks):
    fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene's licence plate is QX-4471")

    with django_capture_on_commit_callbacks() as operator_callbacks:
        facts_search(agent=agent, user=end_user, query="QX-4471", mode="text", record_access=False)
    with django_capture_on_commit_callbacks() as agent_callbacks:
        facts_search(agent=agent, user=end_user, query="QX-4471", mode="text")

    assert (len(operator_callbacks), len(agent_callbacks)) == (0, 1)
