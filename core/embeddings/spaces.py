"""Embedding spaces: which model's vectors reads use.

Reads and writes go to the *active* space and embed with that space's own model, so a process whose settings
already name a new model keeps serving the old space until `reembed` switches it."""

from __future__ import annotations

import copy
from functools import lru_cache

from django.db import connection, transaction
from django.db.models import Func
from django.db.models.functions import Cast
from django.utils import timezone
from pgvector.django import VectorField

from core.embeddings.providers import EmbeddingProvider, build_embedding_provider, get_embedding_provider
from core.models import EmbeddingSpace
from core.runtime.request_path_cache import ProcessCache, request_path_caches_invalidate

_ACTIVE_SPACE_LOCK_KEY = 7_340_001
_active_space: ProcessCache[EmbeddingSpace] = ProcessCache(max_entries=1)


def embedding_space_get_or_create(*, provider: EmbeddingProvider) -> EmbeddingSpace:
    space, _ = EmbeddingSpace.objects.get_or_create(
        name=provider.space_name,
        defaults={"provider": provider.provider, "model": provider.model, "dimensions": provider.dimensions},
    )
    return space


def embedding_space_active() -> EmbeddingSpace:
    """The active space; on a fresh database, the configured provider's space, created."""
    space = EmbeddingSpace.objects.filter(status=EmbeddingSpace.Status.ACTIVE).first()
    if space is not None:
        return space
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_ACTIVE_SPACE_LOCK_KEY])
        space = EmbeddingSpace.objects.filter(status=EmbeddingSpace.Status.ACTIVE).first()
        if space is None:
            space = embedding_space_get_or_create(provider=get_embedding_provider())
            space.status = EmbeddingSpace.Status.ACTIVE
            space.activated_at = timezone.now()
            space.save(update_fields=["status", "activated_at"])
    return space


def embedding_space_active_for_reads() -> EmbeddingSpace:
    """The active space for searches, from the per-process cache (core/runtime/request_path_cache.py). Writers use
    embedding_space_active(): a write must go to the space active when it commits, not to the one a cache saw."""
    space = _active_space.get_or_load(key="active", load=embedding_space_active)
    return copy.copy(space)


@lru_cache(maxsize=4)
def _provider_for(provider: str, model: str, dimensions: int) -> EmbeddingProvider:
    configured = get_embedding_provider()
    if (configured.provider, configured.model, configured.dimensions) == (provider, model, dimensions):
        return configured
    return build_embedding_provider(provider=provider, model=model, dimensions=dimensions)


def embedding_provider_for_space(*, space: EmbeddingSpace) -> EmbeddingProvider:
    return _provider_for(space.provider, space.model, space.dimensions)


def embedding_expression(*, space: EmbeddingSpace) -> Func:
    """`embedding::vector(<dims>)`: the expression per-agent HNSW indexes are built on
    (facts/services/vector_indexes.py), so that ORDER BY this <=> query can use one where a query's conditions match
    its predicate; elsewhere an exact scan."""
    return Cast("embedding", VectorField(dimensions=space.dimensions))


@transaction.atomic
def embedding_space_activate(*, space: EmbeddingSpace) -> EmbeddingSpace | None:
    """Make the space the one reads and writes use, in one transaction; returns the space it replaced."""
    previous = EmbeddingSpace.objects.select_for_update().filter(status=EmbeddingSpace.Status.ACTIVE).first()
    space = EmbeddingSpace.objects.select_for_update().get(pk=space.pk)
    if previous is not None and previous.pk != space.pk:
        previous.status = EmbeddingSpace.Status.RETIRED
        previous.save(update_fields=["status"])
    space.status = EmbeddingSpace.Status.ACTIVE
    space.activated_at = timezone.now()
    space.save(update_fields=["status", "activated_at"])
    request_path_caches_invalidate()
    return previous


def embedding_space_rebuild_start(*, space: EmbeddingSpace) -> None:
    """A retired space filled again (a re-embed back to an earlier model): building until activated."""
    EmbeddingSpace.objects.filter(pk=space.pk).update(status=EmbeddingSpace.Status.BUILDING)
    request_path_caches_invalidate()
    space.status = EmbeddingSpace.Status.BUILDING
