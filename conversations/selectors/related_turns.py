"""The graph signal of turn search, given by the app that keeps the entity graph.

conversations sits below facts (docs/architecture.md, "Parts and the imports they may make") and may not import it,
yet facts' relations know which messages they were formed from: facts registers its ranking here when the apps load
(facts.apps.FactsConfig.ready), and message search fuses it as `graph_rank` (MEMORY_GRAPH_WEIGHT, 0 = off). Without a
registered ranking, turn search has no graph signal."""

from __future__ import annotations

from typing import Protocol

from core.search.time_expressions import Period


class MessagesGraphRanking(Protocol):
    def __call__(
        self, *, agent_id: int, user_id: int, query: str, hops: int, limit: int, period: Period | None
    ) -> list[int]:
        """Up to `limit` message ids about the entities the query names and those `hops` relations from them, best
        first; the caller keeps those in its scope."""


_registered: list[MessagesGraphRanking] = []


def messages_graph_ranking_register(ranking: MessagesGraphRanking) -> None:
    _registered[:] = [ranking]


def messages_graph_ranking() -> MessagesGraphRanking | None:
    return _registered[0] if _registered else None
