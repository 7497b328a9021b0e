"""World time in fact search: the candidates' world times, read once (`CandidateWorldTimes`), and the tiers that put a
statement known not to hold at the time a question asks about below every one that may (`world_time_tiers`;
docs/decisions/0039-world-time.md). The fused signals order each tier (facts.selectors.search)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from core.runtime.timing import stage_timed
from core.search.time_expressions import Period
from facts.grammar.time_questions import RelativeAnchor, anchor_names_the_statement
from facts.models import Fact
from facts.world_time import UNKNOWN_WORLD_TIME, WORLD_TIME_FIELDS, WorldTime

# How many of the best candidates are looked through for the statement a "before/after" question names.
ANCHOR_CANDIDATES = 20
# An end this close to the anchor's start is where the anchor began (a month's precision against a day's).
ANCHOR_SAME_DAYS = 31


class CandidateWorldTimes:
    """The world time (and the day named) of the candidates, read once, when a part of the search needs it."""

    def __init__(self) -> None:
        self.times: dict[int, WorldTime] = {}
        self.refers_to: dict[int, date | None] = {}

    def read(self, *, fact_ids: list[int]) -> None:
        missing = [fact_id for fact_id in fact_ids if fact_id not in self.times]
        if not missing:
            return
        with stage_timed("world_sql"):
            rows = Fact.objects.filter(pk__in=missing).values_list("pk", "refers_to", *WORLD_TIME_FIELDS)
        for fact_id, refers_to, start, start_precision, end, end_precision in rows:
            self.refers_to[fact_id] = refers_to
            self.times[fact_id] = WorldTime(
                start=start, start_precision=start_precision, end=end, end_precision=end_precision
            )


@dataclass(frozen=True)
class TimeAsked:
    """The time a question asks about in the world: a day (`holds_at`), now (a question in the present), a period it
    names ("in 2019"), or what held before or after a statement it names ("before she moved to Austin")."""

    holds_at: date | None = None
    present: bool = False
    period: Period | None = None
    anchor: RelativeAnchor | None = None

    @property
    def asked(self) -> bool:
        return self.holds_at is not None or self.present or self.period is not None or self.anchor is not None


def world_time_tiers(
    *, scores: dict[int, float], world: CandidateWorldTimes, asked: TimeAsked, today: date
) -> dict[int, int]:
    """Each candidate's tier (0 first), from its fused score by fact id. A statement known not to hold at the time
    asked about gets a tier above 0, so that what ended never answers for now and what began later never answers for
    then. An event (said as one time) is not a state: a question about now does not put it below. With `holds_at`
    (which leaves out what is known not to have held that day), those whose known bounds say they held that day come
    before those that only may have (no bound known, or an end of unknown time). Before/after a named statement:
    `_anchor_tier`."""
    if not scores or not asked.asked:
        return {}
    world.read(fact_ids=list(scores))
    anchor = _anchor_find(scores=scores, world=world, anchor=asked.anchor) if asked.anchor else None
    tiers = {}
    for fact_id in scores:
        times = world.times.get(fact_id, UNKNOWN_WORLD_TIME)
        tier = 0
        if asked.holds_at is not None and not (times.known and times.holds_on(asked.holds_at)):
            tier = 1
        if asked.present and times.ended and not times.is_event and not times.holds_on(today):
            tier = 1
        if asked.period is not None and not times.may_hold_during(start=asked.period.start, end=asked.period.end):
            tier = 1
        if anchor is not None and asked.anchor is not None:
            tier = max(tier, _anchor_tier(times=times, anchor_start=anchor, before=asked.anchor.before))
        tiers[fact_id] = tier
    return tiers


def _anchor_find(*, scores: dict[int, float], world: CandidateWorldTimes, anchor: RelativeAnchor) -> date | None:
    """When the statement the question names began: the best-scored candidate that states it and says when."""
    best = sorted(scores, key=lambda fact_id: (-scores[fact_id], -fact_id))[:ANCHOR_CANDIDATES]
    started = [fact_id for fact_id in best if (times := world.times.get(fact_id)) and times.start is not None]
    contents = dict(Fact.objects.filter(pk__in=started).values_list("pk", "content"))
    for fact_id in started:
        if anchor_names_the_statement(anchor, contents.get(fact_id, "")):
            return world.times[fact_id].start
    return None


def _anchor_tier(*, times: WorldTime, anchor_start: date, before: bool) -> int:
    """Before the named statement: 0 for a statement that ended where it began (the value it replaced), 2 for one
    that began with or after it (itself included), 1 for the rest. After it: 2 for a statement that ended before it
    began, 0 for the rest; what began later is not lifted (any later statement is, not only the one asked about), and
    the named statement stays, as it often says what followed ("What did she realise after the race?")."""
    if before:
        if times.start is not None and times.start >= anchor_start:
            return 2
        return 0 if times.end is not None and abs((times.end - anchor_start).days) <= ANCHOR_SAME_DAYS else 1
    return 2 if times.end is not None and times.end <= anchor_start else 0
