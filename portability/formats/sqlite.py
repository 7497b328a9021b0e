"""A SQLite file with a `memory` table: `id`, `content`, `tags` (a JSON array), `created_at`."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from portability.formats.common import ImportFormatError, parse_timestamp, require_file
from portability.records import ImportedFact, MemoryImport


def _tags(raw: object) -> tuple[str, ...]:
    if raw in (None, ""):
        return ()
    try:
        tags = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        tags = [part.strip() for part in str(raw).split(",")]
    if not isinstance(tags, list):
        return (str(tags),)
    return tuple(str(tag) for tag in tags if str(tag).strip())


def read_sqlite(*, path: Path, agent_external_id: str, user_external_id: str | None) -> list[MemoryImport]:
    """Each row is a fact: the user's with --user, otherwise the agent's. Opened read-only."""
    require_file(path)
    data = MemoryImport(format="sqlite", source=path.name, agent_external_id=agent_external_id)
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise ImportFormatError(f"{path.name}: cannot open as SQLite ({error})") from error
    try:
        connection.row_factory = sqlite3.Row
        rows = connection.execute("SELECT id, content, tags, created_at FROM memory ORDER BY created_at, id").fetchall()
    except sqlite3.Error as error:
        raise ImportFormatError(f"{path.name}: no memory(id, content, tags, created_at) table: {error}") from error
    finally:
        connection.close()
    for row in rows:
        data.facts.append(
            ImportedFact(
                original_id=str(row["id"]),
                content=str(row["content"] or ""),
                user_external_id=user_external_id,
                scopes=("user",) if user_external_id else ("agent",),
                valid_from=parse_timestamp(row["created_at"]),
                tags=_tags(row["tags"]),
            )
        )
    return [data]
