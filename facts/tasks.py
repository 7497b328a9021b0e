from datetime import datetime

from celery import shared_task
from django.db import OperationalError

from core.embeddings.spaces import embedding_space_active
from facts.access import facts_access_record, facts_accesses_fold
from facts.services import facts_embed_missing, facts_reembed
from facts.vector_indexes import fact_vector_indexes_maintain


@shared_task(
    name="facts.embed_missing",
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
    name="facts.record_access",
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=5,
)
def facts_access_record_task(fact_ids: list[int], accessed_at: str) -> int:
    """What searches queued before access tracking moved to the access log (facts/access.py): kept so that tasks
    queued by the previous version during an upgrade are still counted. Not acks_late: an increment is not
    idempotent, and a count lost to a dead worker beats one counted twice."""
    return facts_access_record(fact_ids=fact_ids, accessed_at=datetime.fromisoformat(accessed_at))


@shared_task(name="facts.fold_accesses")
def facts_accesses_fold_task() -> int:
    """The access log folded into the facts (beat: facts-access-fold). Not retried: the next run folds what is left."""
    return facts_accesses_fold()


@shared_task(
    name="facts.reembed",
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
    name="facts.embed_reference_chunks",
    acks_late=True,
    autoretry_for=(Exception,),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=5,
)
def reference_chunks_embed_task(chunk_ids: list[int]) -> int:
    """Idempotent: chunks already embedded in the active space are skipped."""
    from facts.reference_documents import reference_chunks_embed_missing

    return reference_chunks_embed_missing(chunk_ids=chunk_ids)


@shared_task(name="facts.vector_indexes_maintain", ignore_result=True)
def fact_vector_indexes_maintain_task() -> dict[str, list[str]]:
    """Idempotent: builds only missing indexes, drops only unneeded ones. Builds take seconds to minutes and never
    block writes (CREATE INDEX CONCURRENTLY)."""
    changes = fact_vector_indexes_maintain(space=embedding_space_active())
    return {"built": changes.built, "dropped": changes.dropped}
