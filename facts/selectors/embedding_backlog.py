"""The embedding backlog /metrics reads at scrape time (registered in FactsConfig.ready): texts stored recently that
have no vector in the active space yet. In the facts app because it counts both facts and conversations' messages
(facts may read conversations, not the other way round)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily, Metric

from conversations.models import Message
from core.embeddings.spaces import embedding_space_active
from core.observability.metrics import NAMESPACE
from facts.models import Fact

# The window the embedding sweeps retry: a text stored earlier without a vector is not waiting any more, it is lost
# work the sweeps do not see (re-embedding is `reembed`'s job), and counting every row would scan whole tables.
EMBEDDING_BACKLOG_WINDOW = timedelta(days=1)


def embedding_backlog_metrics() -> Iterator[Metric]:
    family = GaugeMetricFamily(
        f"{NAMESPACE}_embedding_backlog",
        "Texts stored in the last day that have no vector in the active embedding space yet, by kind (message, fact).",
        labels=["kind"],
    )
    space = embedding_space_active()
    since = timezone.now() - EMBEDDING_BACKLOG_WINDOW
    messages = Message.objects.filter(stored_at__gte=since).exclude(embeddings__space=space)
    facts = Fact.objects.filter(formed_at__gte=since, valid_to__isnull=True).exclude(embeddings__space=space)
    family.add_metric(["message"], messages.count())
    family.add_metric(["fact"], facts.count())
    yield family
