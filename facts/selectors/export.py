"""Selected facts as JSON lines, for the admin's "export selected facts": one readable record per fact version, naming
agents, users and sessions by their external ids as the API does. (Whole agents or users are exported losslessly, for
re-import, by portability.native.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime

from django.db.models import Prefetch, QuerySet

from conversations.models import Message
from facts.models import Fact

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
