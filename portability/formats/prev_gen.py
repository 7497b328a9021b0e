"""The previous generation of this kind of system: three collections, in one JSON file under the keys
`memory_sessions`, `memory_user` and `memory_agent`, or in a folder as <name>.json / <name>.jsonl.

memory_sessions: `{session_id, user_id, items: [{id, type, content, created_at}]}` with item types
episode, directive, fact, suggestion. memory_user: `{user_id, blob}`. memory_agent: `{agent_id, shard, blob}`."""

from __future__ import annotations

import json
from pathlib import Path

from portability.formats.common import ImportFormatError, parse_timestamp, plain_id, read_json_records
from portability.records import ImportedBlob, ImportedFact, ImportedReflection, ImportedSession, MemoryImport

COLLECTIONS = ("memory_sessions", "memory_user", "memory_agent")
# Directives are standing instructions about the user; suggestions and episodes belong to the session they came from.
REFLECTION_SCOPE_OF_ITEM = {"directive": "user", "suggestion": "session", "episode": "session"}


def _collections(path: Path) -> dict[str, list[dict]]:
    if path.is_dir():
        found = {}
        for name in COLLECTIONS:
            for candidate in (path / f"{name}.jsonl", path / f"{name}.json"):
                if candidate.is_file():
                    found[name] = read_json_records(candidate, list_keys=(name,))
                    break
        return found
    if not path.is_file():
        raise ImportFormatError(f"{path} is neither a file nor a folder")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ImportFormatError(f"{path.name}: not JSON ({error.msg})") from error
    if not isinstance(data, dict):
        raise ImportFormatError(f"{path.name}: expected an object with {', '.join(COLLECTIONS)}")
    return {name: data[name] for name in COLLECTIONS if isinstance(data.get(name), list)}


def read_prev_gen(*, path: Path, agent_external_id: str, user_external_id: str | None) -> list[MemoryImport]:
    """Facts become user facts with their session as source, directives user reflections, suggestions and episodes
    session reflections; user blobs become user blobs and the agent's shards, joined in shard order, its blob."""
    collections = _collections(path)
    if not collections:
        raise ImportFormatError(f"{path}: none of {', '.join(COLLECTIONS)} found")
    data = MemoryImport(format="prev-gen", source=path.name, agent_external_id=agent_external_id)
    sessions: dict[str, ImportedSession] = {}
    for document in collections.get("memory_sessions", []):
        session_id = str(document.get("session_id") or plain_id(document.get("_id", "")))
        user = user_external_id or str(document.get("user_id") or "")
        if not session_id or not user:
            data.skipped["memory_sessions without session_id or user_id"] += 1
            continue
        session = sessions.setdefault(session_id, ImportedSession(external_id=session_id, user_external_id=user))
        items = document.get("items")
        if not isinstance(items, list):
            items = [document]
        for position, item in enumerate(items):
            kind, content = str(item.get("type") or ""), str(item.get("content") or "")
            original_id = str(plain_id(item.get("id") or item.get("_id") or f"{session_id}:{position}"))
            created_at = parse_timestamp(item.get("created_at"))
            if kind == "fact":
                data.facts.append(
                    ImportedFact(
                        original_id=original_id,
                        content=content,
                        user_external_id=session.user_external_id,
                        scopes=("user",),
                        valid_from=created_at,
                        source_session=session_id,
                    )
                )
            elif kind in REFLECTION_SCOPE_OF_ITEM:
                scope = REFLECTION_SCOPE_OF_ITEM[kind]
                data.reflections.append(
                    ImportedReflection(
                        original_id=original_id,
                        scope=scope,
                        content=content,
                        user_external_id=session.user_external_id,
                        session_external_id=session_id if scope == "session" else None,
                        created_at=created_at,
                    )
                )
            else:
                data.skipped[f"memory_sessions items of type {kind!r}"] += 1
    data.sessions = list(sessions.values())
    for document in collections.get("memory_user", []):
        user = user_external_id or str(document.get("user_id") or "")
        stated = [str(v) for v in document.get("versions") or ()] + [str(document.get("blob") or "")]
        versions = tuple(v for v in stated if v.strip())
        if not user or not versions:
            data.skipped["memory_user without user_id or blob"] += 1
            continue
        data.blobs.append(
            ImportedBlob(
                original_id=plain_id(document.get("_id", user)), scope="user", versions=versions, user_external_id=user
            )
        )
    shards = sorted(
        collections.get("memory_agent", []), key=lambda shard: int(shard.get("shard", shard.get("shard_id", 0)))
    )
    texts = [str(shard.get("blob") or "").strip() for shard in shards]
    if any(texts):
        data.blobs.append(
            ImportedBlob(
                original_id="memory_agent:"
                + ",".join(str(shard.get("shard", shard.get("shard_id", ""))) for shard in shards),
                scope="agent",
                versions=("\n\n".join(text for text in texts if text),),
            )
        )
    return [data]
