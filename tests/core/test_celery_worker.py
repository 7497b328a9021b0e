import pytest

from facts.models import Fact, FactEmbedding
from facts.tasks import facts_embed_missing_task


@pytest.mark.django_db(transaction=True)
def test_a_task_runs_on_a_real_worker_through_redis(agent, celery_worker_process):
    fact = Fact.objects.create(
        agent=agent,
        scopes=["agent"],
        content="Deliveries arrive on Tuesdays",
        content_hash="x" * 64,
        formed_at="2026-01-01T00:00:00Z",
        valid_from="2026-01-01T00:00:00Z",
    )

    result = facts_embed_missing_task.delay([fact.pk])

    assert result.get(timeout=60) == 1
    embedding = FactEmbedding.objects.get(fact=fact)
    assert len(embedding.embedding) == 384
    # Idempotent: a second delivery embeds nothing again.
    assert facts_embed_missing_task.delay([fact.pk]).get(timeout=60) == 0
    assert FactEmbedding.objects.filter(fact=fact).count() == 1
