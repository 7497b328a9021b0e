"""The conversations app's own metric families (core.observability.metrics has the generic ones): messages ingested,
counted where they happen."""

from __future__ import annotations

from django.db import transaction
from prometheus_client import Counter

from core.observability.metrics import NAMESPACE, metrics_enabled

ingested_messages = Counter(
    "ingested_messages",
    "Messages stored by ingestion (API appends and the chat proxy), by role; rate() gives messages per second.",
    ["role"],
    namespace=NAMESPACE,
)
ROLES = frozenset({"user", "assistant", "tool", "system"})


def messages_ingested_count(*, roles: list[str]) -> None:
    """Counted once the append commits (a rolled-back append stored nothing)."""
    if not metrics_enabled():
        return

    def count() -> None:
        for role in roles:
            ingested_messages.labels(role if role in ROLES else "other").inc()

    transaction.on_commit(count)
