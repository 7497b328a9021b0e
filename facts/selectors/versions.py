"""Every version of one fact, for its history page."""

from __future__ import annotations

from django.db.models import Prefetch

from conversations.models import Message
from facts.models import Fact


def fact_versions(*, fact: Fact) -> list[Fact]:
    """All versions sharing the fact's lineage, newest first, with the messages that wrote and closed each."""
    messages = Message.objects.select_related("session").only(
        "id", "role", "content", "created_at", "session__id", "session__external_id"
    )
    return list(
        Fact.objects.filter(lineage=fact.lineage)
        .select_related("agent", "user", "source_session", "superseded_by")
        .prefetch_related(
            Prefetch("source_messages", queryset=messages.order_by("id")),
            Prefetch("closed_by_messages", queryset=messages.order_by("id")),
        )
        .defer("search_vector")
        .order_by("-version")
    )
