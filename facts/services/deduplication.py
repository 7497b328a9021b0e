"""Clean-up of near-duplicate facts that reached the store before reconciliation could catch them (imports, facts
formed concurrently, an older model's threshold). Non-destructive: the newer duplicate is closed as superseded by
the oldest one and stays in history. An operator's fact is never the one closed."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from django.db.models import Q

from agents.models import Agent
from core.embeddings.spaces import embedding_space_active
from core.exceptions import ApplicationError
from facts.models import CURATED_WRITERS, Fact, FactEmbedding
from facts.services.facts import fact_close

# Rows of the similarity matrix computed at once: bounds memory to BLOCK_ROWS x (facts in the scope) floats.
BLOCK_ROWS = 512


@dataclass(frozen=True)
class DuplicateClosure:
    closed_fact_id: int
    kept_fact_id: int
    similarity: float


@dataclass
class DuplicateCleanupReport:
    scopes: int = 0
    facts_compared: int = 0
    closures: list[DuplicateClosure] = field(default_factory=list)


def _duplicates_in_scope(
    *, fact_ids: list[int], vectors: np.ndarray, threshold: float, curated: np.ndarray
) -> list[DuplicateClosure]:
    """Facts come curated first, then oldest first. A fact is a duplicate when it is at least `threshold` similar to
    an earlier fact that is itself kept; it then points to the most similar such fact. Comparing only with kept facts
    stops a chain of small drifts (A~B, B~C, A!~C) from closing C against a fact it does not resemble. A curated fact
    (an operator's) is always kept: its duplicates are closed in its favour, never the other way round."""
    kept = np.zeros(len(fact_ids), dtype=bool)
    closures = []
    for start in range(0, len(fact_ids), BLOCK_ROWS):
        similarities = vectors[start : start + BLOCK_ROWS] @ vectors.T
        for offset, row in enumerate(similarities):
            index = start + offset
            if curated[index]:
                kept[index] = True
                continue
            older_kept = np.flatnonzero(kept[:index])
            if older_kept.size:
                best = older_kept[np.argmax(row[older_kept])]
                if row[best] >= threshold:
                    closures.append(DuplicateClosure(fact_ids[index], fact_ids[best], float(row[best])))
                    continue
            kept[index] = True
    return closures


def facts_near_duplicates(*, agent: Agent, threshold: float) -> DuplicateCleanupReport:
    """Near-duplicate pairs among the agent's current facts, within each scope (same user and same scopes), by
    cosine similarity in the active embedding space. Facts not embedded yet are left out until they are."""
    space = embedding_space_active()
    rows = (
        FactEmbedding.objects.filter(space=space, fact__agent=agent, fact__valid_to__isnull=True)
        .annotate(is_curated=Q(fact__written_by__in=CURATED_WRITERS))
        .order_by("-is_curated", "fact__valid_from", "fact_id")
        .values_list("fact_id", "fact__user_id", "fact__scopes", "embedding", "is_curated")
    )
    groups: dict[tuple, tuple[list[int], list[np.ndarray], list[bool]]] = defaultdict(lambda: ([], [], []))
    for fact_id, user_id, scopes, embedding, is_curated in rows.iterator(chunk_size=2000):
        ids, vectors, curated = groups[(user_id, tuple(sorted(scopes)))]
        ids.append(fact_id)
        vectors.append(np.asarray(embedding, dtype=np.float32))
        curated.append(is_curated)
    report = DuplicateCleanupReport(scopes=len(groups))
    for ids, vectors, curated in groups.values():
        report.facts_compared += len(ids)
        if len(ids) > 1:
            report.closures += _duplicates_in_scope(
                fact_ids=ids, vectors=np.stack(vectors), threshold=threshold, curated=np.array(curated, dtype=bool)
            )
    return report


def facts_close_near_duplicates(*, agent: Agent, threshold: float) -> DuplicateCleanupReport:
    """Close each newer near-duplicate as superseded by the fact it duplicates. Idempotent: closed facts are no
    longer current, so a second run finds nothing."""
    report = facts_near_duplicates(agent=agent, threshold=threshold)
    facts = Fact.objects.in_bulk([closure.closed_fact_id for closure in report.closures])
    kept = Fact.objects.in_bulk([closure.kept_fact_id for closure in report.closures])
    closed = []
    for closure in report.closures:
        try:
            fact_close(
                fact=facts[closure.closed_fact_id],
                reason=f"near-duplicate of fact {closure.kept_fact_id} (similarity {closure.similarity:.3f})",
                superseded_by=kept[closure.kept_fact_id],
            )
        except ApplicationError:  # formation closed or updated it since it was read: nothing left to clean up
            continue
        closed.append(closure)
    report.closures = closed
    return report
