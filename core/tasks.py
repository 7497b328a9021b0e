from celery import shared_task
from django.conf import settings

from conversations.models import Agent
from core.services import corpus_statistics_fold
from facts.deduplication import facts_close_near_duplicates


@shared_task(name="core.cleanup_duplicate_facts_nightly", acks_late=True, ignore_result=True)
def cleanup_duplicate_facts_nightly() -> dict[str, int]:
    """The nightly beat job: only agents listed in CLEANUP_DUPLICATE_FACTS_AGENTS (off by default). Idempotent,
    so a redelivery after a worker crash closes nothing twice."""
    closed = {}
    for agent in Agent.objects.filter(external_id__in=settings.CLEANUP_DUPLICATE_FACTS_AGENTS).order_by("pk"):
        report = facts_close_near_duplicates(agent=agent, threshold=settings.FACT_DUPLICATE_SIMILARITY)
        closed[agent.external_id] = len(report.closures)
    return closed


@shared_task(name="core.corpus_statistics_fold", ignore_result=True)
def corpus_statistics_fold_task() -> int:
    """Idempotent: a second run folds only what was appended since."""
    return corpus_statistics_fold()
