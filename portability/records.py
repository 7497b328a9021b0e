"""What an import reads, independent of the store it came from. Readers (formats/) produce these; the import
service (importer.py) maps them onto agents, users, sessions, messages, facts, reflections and blobs."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the readers run before Django is set up (benchmarks read LoCoMo's dates): no model import
    from facts.world_time import WorldTime


@dataclass(frozen=True)
class ImportedMessage:
    original_id: str
    role: str
    content: str
    created_at: datetime | None = None
    metadata: dict = field(default_factory=dict)


@dataclass
class ImportedSession:
    external_id: str
    user_external_id: str
    messages: list[ImportedMessage] = field(default_factory=list)


@dataclass(frozen=True)
class ImportedFact:
    """A fact for the user (user_external_id set, scope "user") or for the whole agent (scope "agent"), or both.
    `source_messages` names the messages it came from as (session external id, message original id)."""

    original_id: str
    content: str
    user_external_id: str | None
    scopes: tuple[str, ...]
    valid_from: datetime | None = None
    tags: tuple[str, ...] = ()
    metadata: dict = field(default_factory=dict)
    source_session: str | None = None
    source_messages: tuple[tuple[str, str], ...] = ()
    key: str = ""  # a profile key: the fact becomes that attribute's value, superseding an earlier one
    world_time: WorldTime | None = None  # when its statement held, where the source says


@dataclass(frozen=True)
class ImportedReflection:
    original_id: str
    scope: str
    content: str
    user_external_id: str | None = None
    session_external_id: str | None = None
    created_at: datetime | None = None


@dataclass(frozen=True)
class ImportedBlob:
    """A consolidated blob of one scope; `versions` oldest first, the last one becomes current."""

    original_id: str
    scope: str
    versions: tuple[str, ...]
    user_external_id: str | None = None
    session_external_id: str | None = None


@dataclass
class MemoryImport:
    """Everything one reader produced for one agent. `skipped` counts source records the format does not map (with
    the reason), so the report accounts for every record read."""

    format: str
    source: str
    agent_external_id: str
    sessions: list[ImportedSession] = field(default_factory=list)
    facts: list[ImportedFact] = field(default_factory=list)
    reflections: list[ImportedReflection] = field(default_factory=list)
    blobs: list[ImportedBlob] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)
