"""A consolidated blob's versions, the difference between two of them, and its scope's reflection buffer."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet

from core.exceptions import NotFoundError
from reflections.models import ConsolidatedMemory, Reflection

_WORDS_AND_SPACES = re.compile(r"(\s+)")


@dataclass(frozen=True)
class BlobVersion:
    version: int
    content: str
    change_reason: str
    written_at: datetime | None
    replaced_at: datetime | None  # None for the current version

    @property
    def is_current(self) -> bool:
        return self.replaced_at is None

    @property
    def word_count(self) -> int:
        return len(self.content.split())


@dataclass(frozen=True)
class DiffSegment:
    kind: str  # "equal", "insert" or "delete"
    text: str


@dataclass(frozen=True)
class BlobDiff:
    older: BlobVersion
    newer: BlobVersion
    segments: list[DiffSegment]

    @property
    def words_added(self) -> int:
        return sum(len(segment.text.split()) for segment in self.segments if segment.kind == "insert")

    @property
    def words_removed(self) -> int:
        return sum(len(segment.text.split()) for segment in self.segments if segment.kind == "delete")


def consolidated_memory_versions(*, memory: ConsolidatedMemory) -> list[BlobVersion]:
    """The current content and every past version, newest first."""
    current = BlobVersion(
        version=memory.version,
        content=memory.content,
        change_reason=memory.change_reason,
        written_at=memory.last_consolidated_at or memory.updated_at,
        replaced_at=None,
    )
    past = [
        BlobVersion(
            version=row.version,
            content=row.content,
            change_reason=row.change_reason,
            written_at=row.created_at,
            replaced_at=row.replaced_at,
        )
        for row in memory.past_versions.order_by("-version")
    ]
    return [current, *past]


def text_diff_segments(*, older: str, newer: str) -> list[DiffSegment]:
    """A word-level diff that keeps the whitespace (blobs are bullet lists: line breaks matter when reading)."""
    old_tokens, new_tokens = _WORDS_AND_SPACES.split(older), _WORDS_AND_SPACES.split(newer)
    segments: list[DiffSegment] = []
    matcher = difflib.SequenceMatcher(a=old_tokens, b=new_tokens, autojunk=False)
    for operation, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if operation == "equal":
            segments.append(DiffSegment("equal", "".join(old_tokens[old_start:old_end])))
            continue
        if operation in ("delete", "replace"):
            segments.append(DiffSegment("delete", "".join(old_tokens[old_start:old_end])))
        if operation in ("insert", "replace"):
            segments.append(DiffSegment("insert", "".join(new_tokens[new_start:new_end])))
    return [segment for segment in segments if segment.text]


def consolidated_memory_diff(*, memory: ConsolidatedMemory, older_version: int, newer_version: int) -> BlobDiff:
    versions = {version.version: version for version in consolidated_memory_versions(memory=memory)}
    missing = [number for number in (older_version, newer_version) if number not in versions]
    if missing:
        raise NotFoundError(f"this blob has no version {missing[0]}.", fields={"version": ["not found"]})
    older, newer = versions[older_version], versions[newer_version]
    return BlobDiff(older=older, newer=newer, segments=text_diff_segments(older=older.content, newer=newer.content))


def scope_reflections(*, memory: ConsolidatedMemory) -> QuerySet[Reflection]:
    """The reflections of the blob's scope: the buffer (unabsorbed, oldest first: the order consolidation reads
    them in), then the absorbed ones, newest first."""
    return Reflection.objects.filter(
        agent_id=memory.agent_id,
        scope=memory.scope,
        user_id=memory.user_id,
        session_id=memory.session_id,  # type: ignore[misc]  # None is IS NULL; the stubs take no None here
    ).order_by("absorbed", "-absorbed_at", "created_at", "id")
