"""What is stored about one end user: the counts on their admin page, the users API and the erasure confirmation,
which are the rows `portability.services.erasure.user_erase` deletes."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from agents.models import EndUser
from conversations.models import Message, MessageEmbedding, Session
from facts.models import Entity, Fact, FactEmbedding, FactFeedback, Relation
from formation.models import FormationJob, HeldMemory
from reflections.models import ConsolidatedMemory, ConsolidatedMemoryVersion, ConsolidationJob, Reflection


@dataclass(frozen=True)
class UserMemoryCounts:
    current_facts: int
    closed_fact_versions: int
    fact_embeddings: int
    buffered_reflections: int
    absorbed_reflections: int
    blobs: int
    past_blob_versions: int
    sessions: int
    messages: int
    message_embeddings: int
    formation_jobs: int
    consolidation_jobs: int
    entities: int
    relations: int
    held_memories: int
    feedback: int

    def as_rows(self) -> list[tuple[str, int]]:
        """(what, how many), in the order a person reads them."""
        return [
            ("current facts", self.current_facts),
            ("closed fact versions (history)", self.closed_fact_versions),
            ("fact embeddings", self.fact_embeddings),
            ("reflections waiting in the buffer", self.buffered_reflections),
            ("reflections already absorbed", self.absorbed_reflections),
            ("consolidated blobs (user and session scope)", self.blobs),
            ("past blob versions", self.past_blob_versions),
            ("sessions", self.sessions),
            ("messages", self.messages),
            ("message embeddings", self.message_embeddings),
            ("formation jobs", self.formation_jobs),
            ("consolidation jobs", self.consolidation_jobs),
            ("entities", self.entities),
            ("relations", self.relations),
            ("memory held for review", self.held_memories),
            ("feedback given", self.feedback),
        ]

    def as_dict(self) -> dict[str, int]:
        return dict(vars(self))


def user_memory_counts(*, user: EndUser) -> UserMemoryCounts:
    facts = Fact.objects.filter(user=user).aggregate(
        current=Count("id", filter=Q(valid_to__isnull=True)), closed=Count("id", filter=Q(valid_to__isnull=False))
    )
    reflections = Reflection.objects.filter(user=user).aggregate(
        buffered=Count("id", filter=Q(absorbed=False)), absorbed=Count("id", filter=Q(absorbed=True))
    )
    return UserMemoryCounts(
        current_facts=facts["current"],
        closed_fact_versions=facts["closed"],
        fact_embeddings=FactEmbedding.objects.filter(fact__user=user).count(),
        buffered_reflections=reflections["buffered"],
        absorbed_reflections=reflections["absorbed"],
        blobs=ConsolidatedMemory.objects.filter(user=user).count(),
        past_blob_versions=ConsolidatedMemoryVersion.objects.filter(memory__user=user).count(),
        sessions=Session.objects.filter(user=user).count(),
        messages=Message.objects.filter(session__user=user).count(),
        message_embeddings=MessageEmbedding.objects.filter(user=user).count(),
        formation_jobs=FormationJob.objects.filter(session__user=user).count(),
        consolidation_jobs=ConsolidationJob.objects.filter(user=user).count(),
        entities=Entity.objects.filter(user=user).count(),
        relations=Relation.objects.filter(user=user).count(),
        held_memories=HeldMemory.objects.filter(user=user).count(),
        feedback=FactFeedback.objects.filter(user=user).count(),
    )


def user_sessions_recent(*, user: EndUser, limit: int = 20) -> QuerySet[Session]:
    return Session.objects.filter(user=user).order_by("-last_activity_at")[:limit]
