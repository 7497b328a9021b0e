"""What changed about a user, or about one entity, in the order it happened in the world (docs/decisions/
0042-the-timeline.md).

An entry is one fact version and what it says happened:
- "started": a statement memory was told (a lineage's first version);
- "ended": a version that says the statement stopped holding in the world (facts.services.facts.fact_world_end: the
  same content, an end where the version before had none), with its reason and the messages that said so;
- "corrected": a correction of the record: a version that says something else than the one it replaced (a new
  content, or a world time set right), or a version closed without a successor (deleted, forgotten), the latter
  recorded when it was closed, with the messages that closed it.
A version that changed neither what it says nor when it held (a new scope, tags) is no entry.

Entries are placed by when what happened happened in the world: a statement by its start (its own, or else the one
its latest version knows: a start learnt later, with the end, still places the beginning), an ending by its end; an
entry without that time by the day memory recorded it. Ties keep the order memory recorded them in. Pages are read by
keyset (`after`, the position of a page's last entry), so a page costs the same deep in a long history."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum
from typing import Any

from django.db import connection
from django.db.models import Prefetch

from agents.models import Agent, EndUser
from conversations.models import Message
from facts.models import Entity, Fact, Relation

TIMELINE_PAGE_MAX = 200
TIMELINE_CURSOR_MAX_LENGTH = 200


class Happened(StrEnum):
    STARTED = "started"
    ENDED = "ended"
    CORRECTED = "corrected"


class PlacedBy(StrEnum):
    """Which time puts an entry where it is."""

    START = "start"  # the statement's start in the world
    END = "end"  # its end in the world
    RECORDED = "recorded"  # not known in the world: the day memory recorded it


@dataclass(frozen=True, order=True)
class TimelinePosition:
    """Where an entry sits, and where a page resumes: after this one. `closing` tells the entry of a version's closing
    (a deletion) from the entry of the version itself."""

    at: date
    recorded_at: datetime
    fact_id: int
    closing: bool

    def token(self) -> str:
        """The position as an opaque text: the cursor of the page after it (timeline_position_parse reads it)."""
        raw = [self.at.isoformat(), self.recorded_at.isoformat(), self.fact_id, int(self.closing)]
        return base64.urlsafe_b64encode(json.dumps(raw, separators=(",", ":")).encode()).decode().rstrip("=")


def timeline_position_parse(token: str) -> TimelinePosition:
    """The position a TimelinePosition.token names; ValueError for any other text."""
    try:
        raw = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode())
        at, recorded_at, fact_id, closing = raw
        if type(fact_id) is not int or not 0 < fact_id < 2**63 or closing not in (0, 1):
            raise ValueError("not a position")
        recorded = datetime.fromisoformat(recorded_at)
        if recorded.tzinfo is None:
            raise ValueError("not a position")
        return TimelinePosition(at=date.fromisoformat(at), recorded_at=recorded, fact_id=fact_id, closing=bool(closing))
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError) as error:
        raise ValueError("not a position of a timeline") from error


@dataclass(frozen=True)
class TimelineEntry:
    fact: Fact  # the version, its source and closing messages prefetched (with their sessions)
    happened: Happened
    placed_by: PlacedBy
    position: TimelinePosition
    reason: str

    @property
    def at(self) -> date:
        return self.position.at

    @property
    def recorded_at(self) -> datetime:
        return self.position.recorded_at

    @property
    def messages(self) -> list[Message]:
        """The messages that said it: those a version was formed from, or those that closed it."""
        return list(self.fact.closed_by_messages.all() if self.position.closing else self.fact.source_messages.all())


@dataclass(frozen=True)
class TimelinePage:
    entries: list[TimelineEntry]
    next_after: TimelinePosition | None  # None: this was the last page


@dataclass(frozen=True)
class TimelineScope:
    """Whose fact versions a timeline reads, as SQL on facts_fact (alias `f`)."""

    where: str
    params: tuple[Any, ...]


def timeline_scope_of_user(*, agent: Agent, user: EndUser) -> TimelineScope:
    """The user's own facts (user-scoped: agent-wide memory is not about them)."""
    return TimelineScope(where="f.agent_id = %s AND f.user_id = %s", params=(agent.pk, user.pk))


def timeline_scope_of_entity(
    *, entity: Entity, conversation: bool = False, seen_by: EndUser | None = None
) -> TimelineScope:
    """Every version of the facts that stated a relation of the entity (as its subject or object). In a
    `conversation` (a model's tool call), only what that conversation may see: agent-wide facts and `seen_by`'s own."""
    through = Relation.source_facts.through._meta.db_table
    relations = Relation._meta.db_table
    fact_table = Fact._meta.db_table
    where = (
        f"f.agent_id = %s AND f.lineage IN (SELECT stated.lineage FROM {fact_table} AS stated "
        f"JOIN {through} AS link ON link.fact_id = stated.id "
        f"JOIN {relations} AS relation ON relation.id = link.relation_id "
        "WHERE relation.subject_id = %s OR relation.object_entity_id = %s)"
    )
    params: tuple[Any, ...] = (entity.agent_id, entity.pk, entity.pk)
    if conversation:
        if seen_by is None:
            where += " AND f.user_id IS NULL"
        else:
            where += " AND (f.user_id IS NULL OR f.user_id = %s)"
            params += (seen_by.pk,)
    return TimelineScope(where=where, params=params)


# One row per entry: the versions of the scope, each beside the one before it in its lineage.
_ENTRIES_SQL = """
WITH versions AS (
    SELECT f.id, f.version, f.content_hash, f.formed_at, f.valid_to, f.superseded_by_id, f.change_reason,
           f.closed_reason, f.held_from, f.held_from_precision, f.held_until, f.held_until_precision,
           LAG(f.version) OVER lineage AS previous_version,
           LAG(f.content_hash) OVER lineage AS previous_hash,
           LAG(f.held_from) OVER lineage AS previous_from,
           LAG(f.held_from_precision) OVER lineage AS previous_from_precision,
           LAG(f.held_until) OVER lineage AS previous_until,
           LAG(f.held_until_precision) OVER lineage AS previous_until_precision,
           LAST_VALUE(f.held_from) OVER whole_lineage AS latest_from
    FROM {fact_table} AS f
    WHERE {scope}
    WINDOW lineage AS (PARTITION BY f.lineage ORDER BY f.version),
           whole_lineage AS (lineage ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
), said AS (
    SELECT *,
           CASE
               WHEN previous_version IS NULL THEN 'started'
               WHEN content_hash = previous_hash AND previous_until_precision = '' AND held_until_precision <> ''
                   THEN 'ended'
               ELSE 'corrected'
           END AS happened,
           previous_version IS NOT NULL AND content_hash = previous_hash
               AND held_from IS NOT DISTINCT FROM previous_from AND held_from_precision = previous_from_precision
               AND held_until IS NOT DISTINCT FROM previous_until
               AND held_until_precision = previous_until_precision AS unchanged
    FROM versions
), entries AS (
    SELECT id AS fact_id, false AS closing, happened,
           CASE WHEN happened = 'ended' THEN held_until ELSE COALESCE(held_from, latest_from) END AS world_at,
           formed_at AS recorded_at, change_reason AS reason
    FROM said WHERE NOT unchanged
    UNION ALL
    SELECT id, true, 'corrected', NULL, valid_to, closed_reason
    FROM said WHERE valid_to IS NOT NULL AND superseded_by_id IS NULL
), placed AS (
    SELECT *, COALESCE(world_at, (recorded_at AT TIME ZONE 'UTC')::date) AS at FROM entries
)
SELECT fact_id, closing, happened, world_at IS NOT NULL, at, recorded_at, reason
FROM placed
WHERE {filters}
ORDER BY at, recorded_at, fact_id, closing
LIMIT %s
"""


def timeline_read(
    *,
    scope: TimelineScope,
    time_from: date | None = None,
    time_to: date | None = None,
    after: TimelinePosition | None = None,
    limit: int = 50,
) -> TimelinePage:
    """One page of the scope's timeline: at most `limit` entries placed from `time_from` to `time_to` (inclusive;
    each optional), those after `after`."""
    limit = max(1, min(limit, TIMELINE_PAGE_MAX))
    filters: list[str] = ["true"]
    params: list[Any] = []
    if time_from is not None:
        filters.append("at >= %s")
        params.append(time_from)
    if time_to is not None:
        filters.append("at <= %s")
        params.append(time_to)
    if after is not None:
        filters.append("(at, recorded_at, fact_id, closing) > (%s, %s, %s, %s)")
        params += [after.at, after.recorded_at, after.fact_id, after.closing]
    sql = _ENTRIES_SQL.format(fact_table=Fact._meta.db_table, scope=scope.where, filters=" AND ".join(filters))
    with connection.cursor() as cursor:
        cursor.execute(sql, [*scope.params, *params, limit + 1])
        rows = cursor.fetchall()
    more = len(rows) > limit
    rows = rows[:limit]
    facts = _versions_with_messages(fact_ids={row[0] for row in rows})
    entries = []
    for fact_id, closing, happened, placed_in_world, at, recorded_at, reason in rows:
        entries.append(
            TimelineEntry(
                fact=facts[fact_id],
                happened=Happened(happened),
                placed_by=(
                    PlacedBy.RECORDED
                    if not placed_in_world
                    else PlacedBy.END
                    if happened == Happened.ENDED
                    else PlacedBy.START
                ),
                position=TimelinePosition(at=at, recorded_at=recorded_at, fact_id=fact_id, closing=closing),
                reason=reason,
            )
        )
    return TimelinePage(entries=entries, next_after=entries[-1].position if more else None)


def _versions_with_messages(*, fact_ids: set[int]) -> dict[int, Fact]:
    messages = Message.objects.select_related("session").only(
        "id", "role", "content", "created_at", "session__id", "session__external_id"
    )
    versions = (
        Fact.objects.filter(pk__in=fact_ids)
        .select_related("user")
        .prefetch_related(
            Prefetch("source_messages", queryset=messages.order_by("created_at", "id")),
            Prefetch("closed_by_messages", queryset=messages.order_by("created_at", "id")),
        )
        .defer("search_vector")
    )
    return {fact.pk: fact for fact in versions}
