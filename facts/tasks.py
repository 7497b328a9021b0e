from celery import shared_task

from facts.services import facts_embed_missing


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
