"""Per-agent HNSW indexes of agent-wide fact vectors: the access path of agent-wide vector search for agents with
many agent-wide facts (facts.selectors.vectors takes it from MEMORY_SEARCH_HNSW_MIN_SHARED_FACTS on).

One index per (space, agent), partial on exactly the rows a search of that agent's agent-wide facts reads:

    CREATE INDEX fact_vectors_s1_a42_hnsw ON facts_factembedding
    USING hnsw ((embedding::halfvec(384)) halfvec_cosine_ops)
    WHERE space_id = 1::bigint AND agent_id = 42::bigint AND restricted_to_user_id IS NULL AND valid_to IS NULL

so an HNSW search reads only that agent's current vectors and needs no filtering: the index over every agent's
vectors, filtered by agent, lost a fifth of the results at 1M facts (docs/benchmarks/history.md). The index holds half
precision vectors (`halfvec`): at 1M facts, for an agent of 10k, 11 MB instead of 20 MB at the same recall@10 against
an exact scan (0.992 against 0.990 at ef_search 100, 0.973 against 0.972 at 40) and the same latency; the vector rows
keep full precision, and the similarities a search returns are computed from them. Agents below the threshold
have no index (an exact scan of their rows is faster there), and every index is maintained on every write to the
table, so they are built only where they pay: `fact_vector_indexes_maintain` (Celery beat) builds the missing ones
concurrently, without blocking writes, and drops those of agents that fell below half the threshold. Until an index
is built, its agent's search scans exactly: slower, never wrong."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection
from django.db.backends.utils import CursorWrapper

from core.exceptions import ApplicationError
from core.models import EmbeddingSpace
from core.search.retrieval import corpus_documents_by_scope
from facts.selectors.search_scope import CORPUS_SHARED

_NAME = re.compile(r"^fact_vectors_s(\d+)_a(\d+)_hnsw$")


@dataclass
class VectorIndexChanges:
    built: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def fact_vector_index_expression(*, column: str, dimensions: int) -> str:
    """What the indexes hold, and what a search orders by (`<expression> <=> query::halfvec(n)`) to use one: the
    vector in half precision."""
    return f"{column}::halfvec({int(dimensions)})"


def fact_vector_index_name(*, space_id: int, agent_id: int) -> str:
    return f"fact_vectors_s{int(space_id)}_a{int(agent_id)}_hnsw"


def fact_vector_indexes(*, space_id: int) -> dict[int, bool]:
    """The agents of the space that have an index, and whether it is valid (a concurrent build a crash interrupted
    leaves an invalid one)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE c.relname LIKE %s",
            [f"fact\\_vectors\\_s{int(space_id)}\\_a%\\_hnsw"],
        )
        rows = cursor.fetchall()
    indexes = {}
    for name, valid in rows:
        match = _NAME.match(name)
        if match and int(match[1]) == space_id:
            indexes[int(match[2])] = bool(valid)
    return indexes


def _index_build(cursor: CursorWrapper, *, space: EmbeddingSpace, agent_id: int) -> str:
    name = fact_vector_index_name(space_id=space.pk, agent_id=agent_id)
    cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
    cursor.execute(
        f"CREATE INDEX CONCURRENTLY {name} ON facts_factembedding USING hnsw "
        f"(({fact_vector_index_expression(column='embedding', dimensions=space.dimensions)}) halfvec_cosine_ops) "
        f"WHERE space_id = {int(space.pk)}::bigint AND agent_id = {int(agent_id)}::bigint "
        f"AND restricted_to_user_id IS NULL AND valid_to IS NULL"
    )
    return name


def fact_vector_indexes_maintain(*, space: EmbeddingSpace) -> VectorIndexChanges:
    """Build the indexes of the space's agents that reached the threshold and lack one (or have an invalid one), and
    drop those of agents below half of it (so an agent around the threshold is not rebuilt back and forth).
    Idempotent. Needs autocommit: concurrent index builds cannot run in a transaction."""
    if connection.in_atomic_block:
        raise ApplicationError("building indexes concurrently needs autocommit; call this outside a transaction.")
    threshold = settings.MEMORY_SEARCH_HNSW_MIN_SHARED_FACTS
    counts = corpus_documents_by_scope(corpus=CORPUS_SHARED, space_id=space.pk)
    existing = fact_vector_indexes(space_id=space.pk)
    changes = VectorIndexChanges()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = %s", [settings.REEMBED_MAINTENANCE_WORK_MEM])
        try:
            for agent_id, count in sorted(counts.items()):
                if count >= threshold and not existing.get(agent_id, False):
                    changes.built.append(_index_build(cursor, space=space, agent_id=agent_id))
            for agent_id in sorted(existing):
                if counts.get(agent_id, 0) < threshold / 2:
                    name = fact_vector_index_name(space_id=space.pk, agent_id=agent_id)
                    cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
                    changes.dropped.append(name)
        finally:
            cursor.execute("RESET maintenance_work_mem")
    return changes


def fact_vector_indexes_drop(*, space: EmbeddingSpace) -> list[str]:
    """Drop every index of a space (a retired one)."""
    dropped = []
    with connection.cursor() as cursor:
        for agent_id in sorted(fact_vector_indexes(space_id=space.pk)):
            name = fact_vector_index_name(space_id=space.pk, agent_id=agent_id)
            cursor.execute(f"DROP INDEX IF EXISTS {name}")
            dropped.append(name)
    return dropped
