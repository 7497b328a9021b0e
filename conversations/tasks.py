"""Background work of the conversations app: message vectors for turn-level retrieval. Tasks take ids and are
idempotent."""

from __future__ import annotations

from celery import shared_task

from conversations import task_names
from conversations.services.message_embeddings import messages_embed_missing
from core.exceptions import ProviderError


@shared_task(
    name=task_names.EMBED_MESSAGES,
    acks_late=True,
    autoretry_for=(ProviderError,),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=5,
)
def messages_embed_task(message_ids: list[int]) -> int:
    return messages_embed_missing(message_ids=message_ids)
