"""mem0 exports: `{"results": [...]}`, a JSON array or JSON lines of memories
`{id, memory, user_id, agent_id, run_id, metadata, categories, created_at, updated_at}`."""

from __future__ import annotations

from pathlib import Path

from portability.formats.common import parse_timestamp, plain_id, read_json_records, require_file
from portability.records import ImportedFact, MemoryImport


def read_mem0(*, path: Path, agent_external_id: str, user_external_id: str | None) -> list[MemoryImport]:
    """A memory with a user_id (or every memory, with --user) is a user fact, one without an agent fact. mem0
    overwrites a memory in place on update, so the current text is valid from `updated_at`, and its relative times
    ("moved last year") were written then: its world time is read against that day
    (facts.grammar.world_time_phrases); both dates, the agent_id, run_id and hash are kept in metadata, categories
    become tags."""
    from facts.grammar.world_time_phrases import world_time_said  # see locomo.py: readers load before Django

    data = MemoryImport(format="mem0", source=path.name, agent_external_id=agent_external_id)
    for memory in read_json_records(require_file(path), list_keys=("results", "memories")):
        user = user_external_id or (str(memory["user_id"]) if memory.get("user_id") else None)
        original = {
            key: memory[key]
            for key in ("agent_id", "run_id", "hash", "created_at", "updated_at")
            if memory.get(key) is not None
        }
        if memory.get("metadata"):
            original["metadata"] = memory["metadata"]
        content = str(memory.get("memory") or memory.get("text") or "")
        written = parse_timestamp(memory.get("updated_at") or memory.get("created_at"))
        data.facts.append(
            ImportedFact(
                original_id=plain_id(memory.get("id")),
                content=content,
                user_external_id=user,
                scopes=("user",) if user else ("agent",),
                valid_from=written,
                world_time=world_time_said(content, said_on=written.date()) if written else None,
                tags=tuple(str(category) for category in memory.get("categories") or ()),
                metadata={"mem0": original} if original else {},
            )
        )
    return [data]
