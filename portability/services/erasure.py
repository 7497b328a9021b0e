"""Erasure of one end user (a right-to-erasure request): everything stored about them goes, an audit record stays.
The management command, the API and the admin all call `user_erase`."""

from __future__ import annotations

import hashlib
from collections import Counter

from django.db import transaction
from django.db.models import QuerySet

from agents.models import EndUser, ErasureRecord
from conversations.models import Message, Session
from core.runtime.request_path_cache import request_path_caches_invalidate
from facts.models import Entity, Fact, Relation
from reflections.models import ConsolidatedMemory, ConsolidationJob, Reflection
from reflections.services.context_cache import context_cache_invalidate


def user_external_id_hash(*, agent_external_id: str, user_external_id: str) -> str:
    return hashlib.sha256(f"{agent_external_id}\x00{user_external_id}".encode()).hexdigest()


def _delete(queryset: QuerySet, counts: Counter) -> None:
    _, per_model = queryset.delete()
    counts.update({label: n for label, n in per_model.items() if n})


@transaction.atomic
def user_erase(*, user: EndUser, requested_by: str) -> ErasureRecord:
    """Delete the user's messages (with their embeddings), facts (every version, with embeddings), entities and
    relations, reflections, blobs (with past versions), sessions, jobs and the user row itself, and invalidate their
    cached context.

    Agent-scoped memory that formation derived from this user's conversations stays: it is the agent's knowledge,
    not the user's (formation keeps user-specific statements in user scope); only its links to the deleted
    messages and sessions are removed."""
    # Locks in an append's order (its sessions, then the user) so that an erasure and an append cannot deadlock: an
    # append to one of these sessions waits for the erasure, or the erasure for it.
    list(Session.objects.select_for_update().filter(user_id=user.pk).order_by("pk").values_list("pk", flat=True))
    user = EndUser.objects.select_for_update().select_related("agent").get(pk=user.pk)
    agent = user.agent
    counts: Counter = Counter()
    _delete(Relation.objects.filter(user=user), counts)
    _delete(Entity.objects.filter(user=user), counts)
    _delete(Fact.objects.filter(user=user), counts)
    _delete(Reflection.objects.filter(user=user), counts)
    _delete(ConsolidatedMemory.objects.filter(user=user), counts)
    _delete(ConsolidationJob.objects.filter(user=user), counts)
    _delete(Message.objects.filter(session__user=user), counts)
    _delete(Session.objects.filter(user=user), counts)
    user_id = user.pk
    _delete(EndUser.objects.filter(pk=user_id), counts)
    record = ErasureRecord.objects.create(
        agent=agent,
        agent_external_id=agent.external_id,
        user_external_id_hash=user_external_id_hash(
            agent_external_id=agent.external_id, user_external_id=user.external_id
        ),
        deleted_counts=dict(sorted(counts.items())),
        requested_by=requested_by,
    )
    request_path_caches_invalidate()
    transaction.on_commit(lambda: context_cache_invalidate(agent_id=agent.pk, user_id=user_id))
    return record
