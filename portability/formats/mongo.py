"""Two Mongo-based stores, read from `mongoexport` output (JSON lines or a JSON array, extended JSON accepted).

mongo-facts: one collection of documents `{_id, type: "fact", content, content_embedding, timestamp, metadata}`.
mongo-collections: a folder with `vectors`, `summaries` and `memories` (.jsonl or .json each)."""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

from portability.formats.common import (
    ImportFormatError,
    message_role,
    parse_timestamp,
    plain_id,
    read_json_records,
    require_directory,
    require_file,
)
from portability.records import (
    ImportedBlob,
    ImportedFact,
    ImportedMessage,
    ImportedSession,
    MemoryImport,
)


def read_mongo_facts(*, path: Path, agent_external_id: str, user_external_id: str | None) -> list[MemoryImport]:
    """Facts of `metadata.user_id` (or of --user) are user facts, the others agent facts. The old vectors are not
    kept: they came from another model, and every fact is embedded again in the active space."""
    data = MemoryImport(format="mongo-facts", source=path.name, agent_external_id=agent_external_id)
    for document in read_json_records(require_file(path)):
        if document.get("type") != "fact":
            data.skipped[f"documents of type {document.get('type')!r}"] += 1
            continue
        metadata = dict(document.get("metadata") or {})
        user = user_external_id or (str(metadata["user_id"]) if metadata.get("user_id") else None)
        data.facts.append(
            ImportedFact(
                original_id=plain_id(document.get("_id")),
                content=str(document.get("content") or ""),
                user_external_id=user,
                scopes=("user",) if user else ("agent",),
                valid_from=parse_timestamp(document.get("timestamp")),
                tags=tuple(str(tag) for tag in metadata.get("tags") or ()),
                metadata={"original_metadata": metadata} if metadata else {},
            )
        )
    return [data]


def _collection(folder: Path, name: str) -> list[dict]:
    for candidate in (folder / f"{name}.jsonl", folder / f"{name}.json"):
        if candidate.is_file():
            # No wrapper key: a summaries document has a "summaries" field of its own.
            return read_json_records(candidate)
    return []


def profile_key_from(key: str) -> str:
    """The stored key as a profile key (home-City → home_city), or "" when nothing usable is left."""
    slug = re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")
    return slug if re.fullmatch(r"[a-z][a-z0-9_]{0,99}", slug) else ""


def _humanised(key: str) -> str:
    return key.replace("_", " ").replace("-", " ").strip()


def read_mongo_collections(*, path: Path, agent_external_id: str, user_external_id: str | None) -> list[MemoryImport]:
    """vectors: one document per message (`session_id`, `user_id`, `role`, `content`, `timestamp`) become the
    sessions' messages, in timestamp order. summaries: `{session_id, user_id, summaries: [...]}` become the session's
    blob, the last summary current and the earlier ones its past versions. memories: user key/value pairs
    `{user_id, key, value}` become the user's profile facts "key: value" under that key."""
    folder = require_directory(path)
    data = MemoryImport(format="mongo-collections", source=folder.name, agent_external_id=agent_external_id)
    vectors, summaries, memories = (_collection(folder, name) for name in ("vectors", "summaries", "memories"))
    if not (vectors or summaries or memories):
        raise ImportFormatError(f"{folder} holds none of vectors, summaries, memories (.jsonl or .json)")

    sessions: dict[str, ImportedSession] = {}
    owners: dict[str, set[str]] = defaultdict(set)

    def session_of(document: dict) -> ImportedSession | None:
        session_id = str(document.get("session_id") or "")
        user = user_external_id or str(document.get("user_id") or "")
        if not session_id or not user:
            return None
        owners[session_id].add(user)
        return sessions.setdefault(session_id, ImportedSession(external_id=session_id, user_external_id=user))

    # Messages in time order; those without a timestamp keep their place in the file, after the dated ones.
    stamped = [(parse_timestamp(document.get("timestamp")), index, document) for index, document in enumerate(vectors)]
    stamped.sort(key=lambda item: (item[0] is None, item[0] or datetime.min.replace(tzinfo=UTC), item[1]))
    for created_at, _, document in stamped:
        session = session_of(document)
        if session is None:
            data.skipped["vectors without session_id or user_id"] += 1
            continue
        session.messages.append(
            ImportedMessage(
                original_id=plain_id(document.get("_id")),
                role=message_role(document.get("role")),
                content=str(document.get("content") or ""),
                created_at=created_at,
            )
        )
    for document in summaries:
        session = session_of(document)
        versions = tuple(str(text) for text in document.get("summaries") or () if str(text).strip())
        if session is None or not versions:
            data.skipped["summaries without session, user or text"] += 1
            continue
        data.blobs.append(
            ImportedBlob(
                original_id=plain_id(document.get("_id", session.external_id)),
                scope="session",
                versions=versions,
                user_external_id=session.user_external_id,
                session_external_id=session.external_id,
            )
        )
    for document in memories:
        user = user_external_id or str(document.get("user_id") or "")
        key, value = str(document.get("key") or "").strip(), str(document.get("value") or "").strip()
        if not (user and key and value):
            data.skipped["memories without user_id, key or value"] += 1
            continue
        data.facts.append(
            ImportedFact(
                original_id=plain_id(document.get("_id", f"{user}:{key}")),
                content=f"{_humanised(key)}: {value}",
                user_external_id=user,
                scopes=("user",),
                valid_from=parse_timestamp(document.get("updated_at") or document.get("created_at")),
                metadata={"key": key, "value": value},
                key=profile_key_from(key),
            )
        )
    shared = sorted(session_id for session_id, users in owners.items() if len(users) > 1)
    if shared:
        raise ImportFormatError(f"sessions with more than one user_id: {', '.join(shared[:5])}")
    data.sessions = list(sessions.values())
    return [data]
