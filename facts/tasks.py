from datetime import datetime

from celery import shared_task
from django.conf import settings
from django.db import OperationalError

from agents.models import Agent
from core.embeddings.spaces import embedding_space_active
from facts import task_names
from facts.services.access import facts_access_record, facts_accesses_fold
from facts.services.deduplication import facts_close_near_duplicates
from facts.services.facts import facts_embed_missing, facts_reembed
from facts.services.graph_extraction import facts_graph_extract
from facts.services.reference_documents import reference_chunks_embed_missing
from facts.services.vector_indexes import fact_vector_indexes_maintain


@shared_task(
    name=task_names.EMBED_MISSING,
    acks_late=True,
    autoretry_for=(Exception,),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=5,
)
def facts_embed_missing_task(fact_ids: list[int]) -> int:
    """Embed facts written without a vector (imports, bulk writes). Idempotent: embedded facts are skipped."""
    return facts_embed_missing(fact_ids=fact_ids)


@shared_task(
    name=task_names.GRAPH_EXTRACT,
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=5,
)
def facts_graph_extract_task(fact_ids: list[int]) -> int:
    """The graph of facts written without one (API, admin, assistant tools). Idempotent: relations that hold already
    only gain the fact as a source."""
    return facts_graph_extract(fact_ids=fact_ids)


@shared_task(
    name="facts.record_access",
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=5,
)
def facts_access_record_task(fact_ids: list[int], accessed_at: str) -> int:
    """What searches queued before access tracking moved to the access log (facts/services/access.py): kept so that
    tasks queued by the previous version during an upgrade are still counted. Not acks_late: an increment is not
    idempotent, and a count lost to a dead worker beats one counted twice."""
    return facts_access_record(fact_ids=fact_ids, accessed_at=datetime.fromisoformat(accessed_at))


@shared_task(name="facts.fold_accesses")
def facts_accesses_fold_task() -> int:
    """The access log folded into the facts (beat: facts-access-fold). Not retried: the next run folds what is left."""
    return facts_accesses_fold()


@shared_task(
    name=task_names.REEMBED,
    acks_late=True,
    autoretry_for=(Exception,),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=5,
)
def facts_reembed_task(fact_ids: list[int]) -> int:
    """Idempotent: re-embedding twice writes the same vectors."""
    return facts_reembed(fact_ids=fact_ids)


@shared_task(
    name=task_names.EMBED_REFERENCE_CHUNKS,
    acks_late=True,
    autoretry_for=(Exception,),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=5,
)
def reference_chunks_embed_task(chunk_ids: list[int]) -> int:
    """Idempotent: chunks already embedded in the active space are skipped."""
    return reference_chunks_embed_missing(chunk_ids=chunk_ids)


@shared_task(name="facts.vector_indexes_maintain", ignore_result=True)
def fact_vector_indexes_maintain_task() -> dict[str, list[str]]:
    """Idempotent: builds only missing indexes, drops only unneeded ones. Builds take seconds to minutes and never
    block writes (CREATE INDEX CONCURRENTLY)."""
    changes = fact_vector_indexes_maintain(space=embedding_space_active())
    return {"built": changes.built, "dropped": changes.dropped}


@shared_task(name="facts.cleanup_duplicate_facts_nightly", acks_late=True, ignore_result=True)
def cleanup_duplicate_facts_nightly() -> dict[str, int]:
    """The nightly beat job: only agents listed in CLEANUP_DUPLICATE_FACTS_AGENTS (off by default). Idempotent,
    so a redelivery after a worker crash closes nothing twice."""
    closed = {}
    for agent in Agent.objects.filter(external_id__in=settings.CLEANUP_DUPLICATE_FACTS_AGENTS).order_by("pk"):
        report = facts_close_near_duplicates(agent=agent, threshold=settings.FACT_DUPLICATE_SIMILARITY)
        closed[agent.external_id] = len(report.closures)
    return closed
