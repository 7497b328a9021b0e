"""Memory as JSON lines, one record a line with a `type`: the admin's "export selected facts" and "export this
user's memory". Records name agents, users and sessions by their external ids, as the API does, and carry database
ids only where they link records of the same export (fact versions, messages)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime

from django.db.models import Prefetch, QuerySet

from conversations.models import EndUser, Message, Session
from facts.models import Fact
from reflections.models import ConsolidatedMemory, ConsolidatedMemoryVersion, Reflection

CHUNK_SIZE = 2000


def _when(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _line(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"


def fact_export_record(fact: Fact) -> dict:
    return {
        "type": "fact",
        "id": fact.pk,
        "lineage": str(fact.lineage),
        "version": fact.version,
        "agent": fact.agent.external_id,
        "user": fact.user.external_id if fact.user else None,
        "scopes": list(fact.scopes),
        "content": fact.content,
        "tags": list(fact.tags),
        "metadata": fact.metadata,
        "formed_at": _when(fact.formed_at),
        "valid_from": _when(fact.valid_from),
        "valid_to": _when(fact.valid_to),
        "change_reason": fact.change_reason,
        "closed_reason": fact.closed_reason,
        "superseded_by": fact.superseded_by_id,
        "source_session": fact.source_session.external_id if fact.source_session else None,
        "source_message_ids": [message.pk for message in fact.source_messages.all()],
    }


def facts_export_lines(*, facts: QuerySet[Fact]) -> Iterator[str]:
    queryset = (
        facts.select_related("agent", "user", "source_session")
        .prefetch_related(Prefetch("source_messages", queryset=Message.objects.only("id")))
        .defer("search_vector")
        .order_by("pk")
    )
    for fact in queryset.iterator(chunk_size=CHUNK_SIZE):
        yield _line(fact_export_record(fact))


def _reflection_records(reflections: Iterable[Reflection]) -> Iterator[dict]:
    for reflection in reflections:
        yield {
            "type": "reflection",
            "id": reflection.pk,
            "scope": reflection.scope,
            "session": reflection.session.external_id if reflection.session else None,
            "content": reflection.content,
            "source": reflection.source,
            "created_at": _when(reflection.created_at),
            "absorbed": reflection.absorbed,
            "absorbed_at": _when(reflection.absorbed_at),
        }


def _blob_records(blobs: Iterable[ConsolidatedMemory]) -> Iterator[dict]:
    for blob in blobs:
        versions: list[ConsolidatedMemoryVersion] = list(blob.past_versions.all())
        yield {
            "type": "consolidated_memory",
            "scope": blob.scope,
            "session": blob.session.external_id if blob.session else None,
            "version": blob.version,
            "content": blob.content,
            "change_reason": blob.change_reason,
            "last_consolidated_at": _when(blob.last_consolidated_at),
            "past_versions": [
                {
                    "version": past.version,
                    "content": past.content,
                    "change_reason": past.change_reason,
                    "created_at": _when(past.created_at),
                }
                for past in sorted(versions, key=lambda past: past.version)
            ],
        }


def user_memory_export_lines(*, user: EndUser) -> Iterator[str]:
    """Everything stored about the user, the same rows user_erase would delete (embeddings left out: they are
    derived, and the importing side re-embeds)."""
    agent = user.agent
    yield _line(
        {
            "type": "user",
            "agent": agent.external_id,
            "user": user.external_id,
            "metadata": user.metadata,
            "created_at": _when(user.created_at),
        }
    )
    yield from facts_export_lines(facts=Fact.objects.filter(user=user))
    reflections = Reflection.objects.filter(user=user).select_related("session").order_by("pk")
    for record in _reflection_records(reflections.iterator(chunk_size=CHUNK_SIZE)):
        yield _line(record)
    blobs = (
        ConsolidatedMemory.objects.filter(user=user)
        .select_related("session")
        .prefetch_related("past_versions")
        .order_by("pk")
    )
    for record in _blob_records(blobs):
        yield _line(record)
    sessions = Session.objects.filter(user=user).order_by("pk")
    for session in sessions.iterator(chunk_size=CHUNK_SIZE):
        yield _line(
            {
                "type": "session",
                "session": session.external_id,
                "started_at": _when(session.started_at),
                "last_activity_at": _when(session.last_activity_at),
                "closed_at": _when(session.closed_at),
                "metadata": session.metadata,
            }
        )
    messages = Message.objects.filter(session__user=user).select_related("session").order_by("session_id", "pk")
    for message in messages.iterator(chunk_size=CHUNK_SIZE):
        yield _line(
            {
                "type": "message",
                "id": message.pk,
                "session": message.session.external_id,
                "role": message.role,
                "content": message.content,
                "created_at": _when(message.created_at),
                "metadata": message.metadata,
            }
        )
