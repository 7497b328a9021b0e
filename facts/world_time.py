"""When a statement held in the world, apart from when memory recorded it (docs/decisions/0039-world-time.md).

A statement holds from a start until an end, each known or not, each as precise as what was said: a day ("on 3 May
2023"), a month ("in May 2023": stored as its first day), a year ("in 2021": January 1st), or roughly ("about three
years ago": the date is the statement's own rough figure). An end may also be known to exist without its time ("I
used to work at Globex": it ended, when is not said). The interval is half-open: it held from the start until the
end, the day the next one began. An event held on its day: from that day until the next.

The LLM writes a bound as "YYYY", "YYYY-MM" or "YYYY-MM-DD", "~" in front when approximate, and an end as "ended"
when only the fact of its ending is known (`world_time_parse`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from dateutil.relativedelta import relativedelta
from django.db import models
from django.db.models import F, Q


class TimePrecision(models.TextChoices):
    DAY = "day", "day"
    MONTH = "month", "month"
    YEAR = "year", "year"
    APPROXIMATE = "approximate", "approximate"
    UNKNOWN = "unknown", "ended, when unknown"


# What a start may be (a start of unknown time is simply no start); an end may also be UNKNOWN.
START_PRECISIONS = (TimePrecision.DAY, TimePrecision.MONTH, TimePrecision.YEAR, TimePrecision.APPROXIMATE)
END_PRECISIONS = (*START_PRECISIONS, TimePrecision.UNKNOWN)
ENDED = "ended"
_BOUND = re.compile(r"^(?P<approximate>~)?(?P<year>\d{4})(?:-(?P<month>\d{2})(?:-(?P<day>\d{2}))?)?$")


class WorldTimeInvalid(ValueError):
    """A bound that cannot be read, or an end before the start: `field` names which ("start", "end")."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class WorldTime:
    """A statement's time in the world. Empty precision: no such bound known. `end_precision` UNKNOWN: it ended, when
    unknown (`end` None)."""

    start: date | None = None
    start_precision: str = ""
    end: date | None = None
    end_precision: str = ""

    def __post_init__(self) -> None:
        if (self.start is None) != (self.start_precision == ""):
            raise WorldTimeInvalid("start", "a start needs a date and a precision, or neither")
        if self.start_precision and self.start_precision not in START_PRECISIONS:
            raise WorldTimeInvalid("start_precision", f"must be one of {', '.join(START_PRECISIONS)}")
        if self.end_precision and self.end_precision not in END_PRECISIONS:
            raise WorldTimeInvalid("end_precision", f"must be one of {', '.join(END_PRECISIONS)}")
        if (self.end is None) != (self.end_precision in ("", TimePrecision.UNKNOWN)):
            raise WorldTimeInvalid("end", "an end needs a date and a precision, 'unknown' without a date, or neither")
        if self.start is not None and self.end is not None and self.end < self.start:
            raise WorldTimeInvalid("end", "the end is before the start")

    @property
    def known(self) -> bool:
        return bool(self.start_precision or self.end_precision)

    @property
    def ended(self) -> bool:
        """It is known to have ended (or to end: a future end counts only once it is reached, see holds_on)."""
        return bool(self.end_precision)

    @property
    def is_event(self) -> bool:
        """Said as one time: a day, a month or a year ("on 3 May", "in 2019"), or a rough span ("last week"). An event,
        or a state said only for then, not a state that ended later."""
        if self.start is None or self.end is None or self.start_precision != self.end_precision:
            return False
        if self.start_precision == TimePrecision.APPROXIMATE:
            return _rough_span(self.start, self.end)
        return self.end == _after(self.start, self.start_precision)

    def may_hold_during(self, *, start: date, end: date) -> bool:
        """Whether the statement may have held at some time from `start` to `end` (both included): only a known bound
        outside rules it out."""
        if self.start is not None and self.start > end:
            return False
        return self.end is None or self.end > start

    def holds_on(self, day: date) -> bool:
        """Whether the statement held on that day, as far as memory knows: not before its start, not from its end
        on, and not at all after an end of unknown time when the day is after what memory was told (the caller
        passes today for 'now')."""
        if self.start is not None and self.start > day:
            return False
        if self.end_precision == TimePrecision.UNKNOWN:
            return False
        return self.end is None or self.end > day

    def may_hold_on(self, day: date) -> bool:
        """Whether the statement may have held on that day: only a known bound on the wrong side rules it out."""
        if self.start is not None and self.start > day:
            return False
        return self.end is None or self.end > day

    def as_dict(self, *, today: date) -> dict[str, object]:
        return {
            "start": self.start.isoformat() if self.start else None,
            "start_precision": self.start_precision,
            "end": self.end.isoformat() if self.end else None,
            "end_precision": self.end_precision,
            "holds_now": self.holds_on(today),
        }


# No bound known: what a statement is given when nothing said when it held.
UNKNOWN_WORLD_TIME = WorldTime()


def event_on(day: date, *, precision: str = TimePrecision.DAY) -> WorldTime:
    """An event held on its day (or month, or year): from then until the next one."""
    return WorldTime(start=day, start_precision=precision, end=_after(day, precision), end_precision=precision)


# The spans one rough expression gives (facts.grammar.world_time_phrases: "a few days ago", "last weekend", "last week",
# "a few months ago", "last summer", "a few years ago"). A state that roughly began and was roughly ended by a later
# statement ("dating since about August", ended roughly at New Year) spans something else: it is no event.
_ROUGH_SPAN_DAYS = frozenset([0, 1, 2, 7, 8])
_ROUGH_SPAN_MONTHS = (1, 3, 12)


def _rough_span(start: date, end: date) -> bool:
    if (end - start).days in _ROUGH_SPAN_DAYS:
        return True
    return any(end == start + relativedelta(months=months) for months in _ROUGH_SPAN_MONTHS)


def _after(day: date, precision: str) -> date:
    if precision == TimePrecision.MONTH:
        return (day.replace(day=1) + timedelta(days=32)).replace(day=1)
    if precision == TimePrecision.YEAR:
        return day.replace(year=day.year + 1, month=1, day=1)
    return day + timedelta(days=1)


def bound_parse(text: str, *, field: str) -> tuple[date, str]:
    """ "2023-05-07" (day), "2023-05" (month), "2023" (year), with "~" in front: approximate."""
    match = _BOUND.match(text.strip())
    if match is None:
        raise WorldTimeInvalid(field, f"{text!r} is not YYYY, YYYY-MM or YYYY-MM-DD (with ~ in front if approximate)")
    year, month, day = int(match["year"]), int(match["month"] or 1), int(match["day"] or 1)
    try:
        value = date(year, month, day)
    except ValueError as error:
        raise WorldTimeInvalid(field, f"{text!r} is not a date: {error}") from error
    if match["approximate"]:
        return value, TimePrecision.APPROXIMATE
    return value, TimePrecision.DAY if match["day"] else TimePrecision.MONTH if match["month"] else TimePrecision.YEAR


def world_time_parse(*, held_from: str | None, held_until: str | None) -> WorldTime:
    """A statement's world time from the LLM's strings (held_until may be "ended"); absent or empty: unknown."""
    start, start_precision = bound_parse(held_from, field="start") if held_from else (None, "")
    if held_until and held_until.strip().lower() == ENDED:
        return WorldTime(start=start, start_precision=start_precision, end_precision=TimePrecision.UNKNOWN)
    end, end_precision = bound_parse(held_until, field="end") if held_until else (None, "")
    return WorldTime(start=start, start_precision=start_precision, end=end, end_precision=end_precision)


def world_time_format(bound: date | None, precision: str) -> str | None:
    """A bound as the LLM writes it (the inverse of bound_parse); "ended" for an end of unknown time."""
    if precision == TimePrecision.UNKNOWN:
        return ENDED
    if bound is None or not precision:
        return None
    if precision == TimePrecision.YEAR:
        return f"{bound:%Y}"
    if precision == TimePrecision.MONTH:
        return f"{bound:%Y-%m}"
    return ("~" if precision == TimePrecision.APPROXIMATE else "") + bound.isoformat()


class WorldTimeFields(models.Model):
    """The columns of a statement's world time (fact versions, relations). Checked by the database as WorldTime
    checks them in Python."""

    held_from = models.DateField(null=True, blank=True, help_text="When the statement began to hold, if known.")
    held_from_precision = models.CharField(
        max_length=12, blank=True, choices=[(p.value, p.label) for p in START_PRECISIONS], help_text="How precise."
    )
    held_until = models.DateField(
        null=True, blank=True, help_text="When it stopped holding (the day the next began), if it did and it is known."
    )
    held_until_precision = models.CharField(
        max_length=12,
        blank=True,
        choices=TimePrecision.choices,
        help_text="How precise; 'unknown': it ended, when is not known.",
    )

    class Meta:
        abstract = True

    @property
    def world_time(self) -> WorldTime:
        return WorldTime(
            start=self.held_from,
            start_precision=self.held_from_precision,
            end=self.held_until,
            end_precision=self.held_until_precision,
        )

    def world_time_set(self, world_time: WorldTime) -> None:
        self.held_from, self.held_from_precision = world_time.start, world_time.start_precision
        self.held_until, self.held_until_precision = world_time.end, world_time.end_precision


WORLD_TIME_FIELDS = ("held_from", "held_from_precision", "held_until", "held_until_precision")


def world_time_constraints(prefix: str) -> list[models.CheckConstraint]:
    """The checks WorldTime makes, kept by the database on every table with WorldTimeFields."""
    return [
        models.CheckConstraint(
            condition=Q(held_from__isnull=True, held_from_precision="")
            | Q(held_from__isnull=False, held_from_precision__in=[p.value for p in START_PRECISIONS]),
            name=f"{prefix}_held_from_has_precision",
        ),
        models.CheckConstraint(
            condition=Q(held_until__isnull=True, held_until_precision__in=["", TimePrecision.UNKNOWN])
            | Q(held_until__isnull=False, held_until_precision__in=[p.value for p in START_PRECISIONS]),
            name=f"{prefix}_held_until_has_precision",
        ),
        models.CheckConstraint(
            condition=Q(held_from__isnull=True) | Q(held_until__isnull=True) | Q(held_until__gte=F("held_from")),
            name=f"{prefix}_held_until_not_before_from",
        ),
    ]
