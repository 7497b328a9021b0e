"""A folder of Markdown files with YAML front matter:

entries/<conversation_id>/turns/user/*.md       one file per user turn
entries/<conversation_id>/turns/assistant/*.md  one file per assistant turn
facts/*.md                                      one fact per file
summaries/summary.md                            the user's (or, without a user, the agent's) summary
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import yaml

from portability.formats.common import ImportFormatError, parse_timestamp, require_directory
from portability.records import ImportedBlob, ImportedFact, ImportedMessage, ImportedSession, MemoryImport

TURN_ROLES = ("user", "assistant")


def _front_matter_and_body(path: Path) -> tuple[dict, str]:
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return {}, text.strip()
    _, _, rest = text.partition("\n")
    header, separator, body = rest.partition("\n---")
    if not separator:
        raise ImportFormatError(f"{path}: front matter is not closed by '---'")
    try:
        front_matter = yaml.safe_load(header) or {}
    except yaml.YAMLError as error:
        raise ImportFormatError(f"{path}: front matter is not YAML ({error})") from error
    if not isinstance(front_matter, dict):
        raise ImportFormatError(f"{path}: front matter must be a mapping")
    return front_matter, body.partition("\n")[2].strip()


def _relative_id(path: Path, root: Path) -> str:
    return path.relative_to(root).with_suffix("").as_posix()


def _conversation(folder: Path, root: Path, user_external_id: str | None) -> ImportedSession | None:
    turns = []
    for role in TURN_ROLES:
        for path in sorted((folder / "turns" / role).glob("*.md")):
            front_matter, body = _front_matter_and_body(path)
            turns.append(
                (
                    parse_timestamp(front_matter.get("timestamp") or front_matter.get("created_at")),
                    path,
                    role,
                    front_matter,
                    body,
                )
            )
    if not turns:
        return None
    # Time order; a turn without a timestamp sorts by file name (0001.md, 0002.md, ...) across both roles.
    turns.sort(key=lambda turn: (turn[0] is None, turn[0] or datetime.min.replace(tzinfo=UTC), turn[1].name))
    users = {str(turn[3]["user_id"]) for turn in turns if turn[3].get("user_id")}
    if len(users) > 1:
        raise ImportFormatError(f"{folder}: turns name more than one user_id ({', '.join(sorted(users))})")
    user = user_external_id or next(iter(users), None)
    if user is None:
        raise ImportFormatError(f"{folder}: no user_id in the turns' front matter; pass --user")
    session = ImportedSession(external_id=folder.name, user_external_id=user)
    for created_at, path, role, front_matter, body in turns:
        extra = {
            key: value for key, value in front_matter.items() if key not in ("timestamp", "created_at", "user_id", "id")
        }
        session.messages.append(
            ImportedMessage(
                original_id=str(front_matter.get("id") or _relative_id(path, root)),
                role=role,
                content=body,
                created_at=created_at,
                metadata={"front_matter": extra} if extra else {},
            )
        )
    return session


def read_markdown(*, path: Path, agent_external_id: str, user_external_id: str | None) -> list[MemoryImport]:
    """Turns become messages of the session named after their conversation folder. A fact is the user's when its
    front matter (or --user) names a user and its `scope` is not `agent`; `conversation_id` links it to its session.
    The summary becomes the consolidated blob of the user, or of the agent when no user is known."""
    root = require_directory(path)
    data = MemoryImport(format="markdown", source=root.name, agent_external_id=agent_external_id)
    for folder in sorted(p for p in (root / "entries").glob("*") if p.is_dir()):
        session = _conversation(folder, root, user_external_id)
        if session is None:
            data.skipped["conversation folders without turns"] += 1
        else:
            data.sessions.append(session)
    for fact_path in sorted((root / "facts").glob("*.md")):
        front_matter, body = _front_matter_and_body(fact_path)
        user = user_external_id or (str(front_matter["user_id"]) if front_matter.get("user_id") else None)
        agent_scoped = front_matter.get("scope") == "agent" or user is None
        data.facts.append(
            ImportedFact(
                original_id=str(front_matter.get("id") or _relative_id(fact_path, root)),
                content=body,
                user_external_id=None if agent_scoped else user,
                scopes=("agent",) if agent_scoped else ("user",),
                valid_from=parse_timestamp(front_matter.get("created_at")),
                tags=tuple(str(tag) for tag in front_matter.get("tags") or ()),
                source_session=str(front_matter["conversation_id"]) if front_matter.get("conversation_id") else None,
            )
        )
    for summary_path in sorted((root / "summaries").glob("*.md")):
        front_matter, body = _front_matter_and_body(summary_path)
        user = user_external_id or (str(front_matter["user_id"]) if front_matter.get("user_id") else None)
        if not body:
            data.skipped["empty summaries"] += 1
            continue
        data.blobs.append(
            ImportedBlob(
                original_id=_relative_id(summary_path, root),
                scope="user" if user else "agent",
                versions=(body,),
                user_external_id=user,
            )
        )
    if not (data.sessions or data.facts or data.blobs):
        raise ImportFormatError(f"{root}: no entries/*/turns, facts/*.md or summaries/*.md")
    return [data]
