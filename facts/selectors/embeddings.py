"""Nearest fact embeddings by cosine distance."""

from __future__ import annotations

from django.db.models import Q, QuerySet
from django.db.models.functions import Cast
from pgvector import HalfVector
from pgvector.django import CosineDistance, HalfVectorField

from agents.models import Agent, EndUser
from core.embeddings.spaces import embedding_provider_for_space, embedding_space_active
from facts.models import FactEmbedding


def fact_embeddings_nearest(*, agent: Agent, query: str, limit: int = 10, user: EndUser | None = None) -> QuerySet:
    """Current facts' embeddings nearest to the query by cosine distance, in the active space, annotated with
    `distance`. Without a user, the facts visible agent-wide (the agent's HNSW index serves it where it has one:
    facts/services/vector_indexes.py); with one, those plus the user's own."""
    space = embedding_space_active()
    vector = embedding_provider_for_space(space=space).embed_query(query)
    queryset = FactEmbedding.objects.filter(space=space, agent=agent, valid_to__isnull=True)
    visible = Q(restricted_to_user__isnull=True)
    if user is not None:
        visible |= Q(restricted_to_user=user)
    queryset = queryset.filter(visible).select_related("fact").annotate(distance=CosineDistance("embedding", vector))
    if user is None:
        # The agent's own HNSW index, where it has one, orders by the half-precision vector
        # (facts/services/vector_indexes.py).
        indexed = Cast("embedding", HalfVectorField(dimensions=space.dimensions))
        return queryset.order_by(CosineDistance(indexed, HalfVector(vector)))[:limit]
    return queryset.order_by("distance")[:limit]
