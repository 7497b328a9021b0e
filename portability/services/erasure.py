"""Erasure of one end user (a right-to-erasure request): everything stored about them goes, an audit record stays.
The management command, the users API and the admin all call `user_erase`. And the deletion of one session
(`session_erase`, the sessions API): the conversation and what is kept of it alone."""

from __future__ import annotations

import hashlib
from collections import Counter
from functools import partial

from django.db import transaction
from django.db.models import QuerySet

from agents.models import Agent, EndUser, ErasureRecord
from conversations.models import Message, Session
from core.runtime.request_path_cache import request_path_caches_invalidate
from facts.models import Entity, Fact, Relation
from reflections.models import ConsolidatedMemory, ConsolidationJob, Reflection
from reflections.services.context_cache import context_cache_entries_delete, context_cache_invalidate
from webhooks.models import WebhookEventType
from webhooks.services.events import webhook_event_record


def user_external_id_hash(*, agent_external_id: str, user_external_id: str) -> str:
    return hashlib.sha256(f"{agent_external_id}\x00{user_external_id}".encode()).hexdigest()


def _delete(queryset: QuerySet, counts: Counter) -> None:
    _, per_model = queryset.delete()
    counts.update({label: n for label, n in per_model.items() if n})


@transaction.atomic
def user_erase(*, user: EndUser, requested_by: str) -> ErasureRecord:
    """Delete the user's messages (with their embeddings), facts (every version, with embeddings), entities and
    relations, reflections, blobs (with past versions), sessions, jobs, held memory, feedback, the webhook events about
    them and the user row itself (every row with a foreign key to the user goes with it), and invalidate their cached
    context. A `user.erased` webhook event names the user and the erasure record.

    Agent-scoped memory that formation derived from this user's conversations stays: it is the agent's knowledge,
    not the user's (formation keeps user-specific statements in user scope); only its links to the deleted
    messages and sessions are removed."""
    # Locks in an append's order (its sessions, then the user) so that an erasure and an append cannot deadlock: an
    # append to one of these sessions waits for the erasure, or the erasure for it.
    session_ids = list(
        Session.objects.select_for_update().filter(user_id=user.pk).order_by("pk").values_list("pk", flat=True)
    )
    user = EndUser.objects.select_for_update().select_related("agent").get(pk=user.pk)
    agent = user.agent
    # First of this transaction's commit hooks: the blocks' keys under the generations before any bump (the deletes
    # below make the signals queue those bumps).
    transaction.on_commit(
        partial(context_cache_entries_delete, agent_id=agent.pk, user_id=user.pk, session_ids=session_ids)
    )
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
    webhook_event_record(
        agent_id=agent.pk,
        event_type=WebhookEventType.USER_ERASED,
        data={"agent": agent.external_id, "user": user.external_id, "erasure_record": record.pk},
    )
    return record


def user_erasure_find(*, agent: Agent, user_external_id: str) -> ErasureRecord | None:
    """The latest erasure of this user of the agent, if any (found by the hash the record keeps)."""
    digest = user_external_id_hash(agent_external_id=agent.external_id, user_external_id=user_external_id)
    return (
        ErasureRecord.objects.filter(agent_external_id=agent.external_id, user_external_id_hash=digest)
        .order_by("-erased_at")
        .first()
    )


@transaction.atomic
def session_erase(*, session: Session) -> dict[str, int]:
    """Delete one session: its messages (with their embeddings), its session-scope reflections and blob (with past
    versions), its formation and consolidation jobs, and invalidate its cached context. What formation already drew
    from it into the user's or the agent's memory stays (facts, user and agent reflections), as it would had the
    conversation ended: it lost only its link to the session. Erase the user to remove that too. Returns the rows
    deleted, per kind."""
    session = Session.objects.select_for_update().get(pk=session.pk)  # as an append locks it: no message slips in
    counts: Counter = Counter()
    _delete(Message.objects.filter(session=session), counts)
    agent_id, session_id = session.agent_id, session.pk
    _delete(Session.objects.filter(pk=session_id), counts)
    transaction.on_commit(lambda: context_cache_invalidate(agent_id=agent_id, session_id=session_id))
    return dict(sorted(counts.items()))
