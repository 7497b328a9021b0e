"""One reader per older store. Each takes the path given on the command line and the target agent's (and optional
user's) external id, and returns MemoryImport values (one per target agent)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from portability.formats import locomo, markdown, mem0, mongo, prev_gen, sqlite
from portability.records import MemoryImport

Reader = Callable[..., list[MemoryImport]]

READERS: dict[str, Reader] = {
    "mongo-facts": mongo.read_mongo_facts,
    "mongo-collections": mongo.read_mongo_collections,
    "sqlite": sqlite.read_sqlite,
    "markdown": markdown.read_markdown,
    "prev-gen": prev_gen.read_prev_gen,
    "mem0": mem0.read_mem0,
    "locomo": locomo.read_locomo,
}


def memory_import_read(
    *, format: str, path: Path, agent_external_id: str, user_external_id: str | None
) -> list[MemoryImport]:
    return READERS[format](path=path, agent_external_id=agent_external_id, user_external_id=user_external_id)
