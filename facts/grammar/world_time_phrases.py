"""When a statement held in the world, as an English clause says it, resolved against the day it was said: the
offline extractor's reading of a user's clause (formation.offline) and an importer's of a stored statement
(portability.formats: LoCoMo's observations against their session's date). No LLM, no parse: regular expressions on
the words, fast enough for every clause formation reads.

What it reads (docs/formation.md "World time"):
- a time: "yesterday", "today", "last week" (roughly, its Monday), "last month" (a month), "last year" (a year),
  "last summer" (roughly), "last Saturday", "three days ago" (a day), "two weeks ago" (roughly), "three months ago"
  (a month), "three years ago" (a year), "a few years ago" (roughly), "in 2019", "in May 2023", "on 3 May 2023",
  "2023-05-03"; "about"/"around" before one makes it rough;
- what the time is to the statement: "since <time>" and "from <time>" start it, "until <time>" ends it, "for three
  years" with a present perfect ("I've lived here for three years") starts it roughly that long before it was said;
  a time alone dates an event (it held over that day, month or year), or starts a state when the verb is one of
  beginning ("started", "joined", "moved", "adopted", "got married": held from then on);
- that it is over: "used to", "formerly", "is a former ...": it ended (when, if "until" says it); a clause in the
  negative ("no longer", "not ... anymore") is not a past statement: the offline extractor turns it into one before
  it gets here.
A time in the future ("next month"), or one it cannot read, leaves the statement's time unknown: never a guess."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

from facts.world_time import UNKNOWN_WORLD_TIME, TimePrecision, WorldTime, event_on

_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
# Counts a speaker gives roughly: the date they make is approximate.
_ROUGH_COUNTS = {"a couple of": 2, "a couple": 2, "a few": 3, "few": 3, "several": 4, "some": 3, "many": 5}
_COUNT = r"(?P<count>\d{1,3}|" + "|".join(sorted([*_NUMBERS, *_ROUGH_COUNTS], key=len, reverse=True)) + ")"
_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sept", "sep"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# A season's months, (first month, months long); winter starts in December.
_SEASONS = {"spring": (3, 3), "summer": (6, 3), "autumn": (9, 3), "fall": (9, 3), "winter": (12, 3)}
_DAYS = {"day": 1, "week": 7, "month": 30.44, "year": 365.25}
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_ORDINAL = r"(?:st|nd|rd|th)?"


@dataclass(frozen=True)
class _Span:
    """A time as said: from `start` until `end` (the day after), as precise as `precision`."""

    start: date
    end: date
    precision: str


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _day(day: date) -> _Span:
    return _Span(day, day + timedelta(days=1), TimePrecision.DAY)


def _month(day: date) -> _Span:
    first = day.replace(day=1)
    return _Span(first, _add_months(first, 1), TimePrecision.MONTH)


def _year(year: int) -> _Span:
    return _Span(date(year, 1, 1), date(year + 1, 1, 1), TimePrecision.YEAR)


def _rough(start: date, end: date) -> _Span:
    return _Span(start, end, TimePrecision.APPROXIMATE)


def _ago(count: str, unit: str, said: date) -> _Span | None:
    rough = count in _ROUGH_COUNTS
    number = _ROUGH_COUNTS.get(count) or _NUMBERS.get(count) or int(count)
    if unit == "day":
        day = said - timedelta(days=number)
        return _rough(day, day + timedelta(days=1)) if rough else _day(day)
    if unit == "week":
        start = said - timedelta(weeks=number)
        return _rough(start, start + timedelta(weeks=1))
    if unit == "month":
        month = _add_months(said, -number)
        return _rough(month, _add_months(month, 1)) if rough else _month(month)
    year = said.year - number
    if year < 1900:
        return None
    return _rough(date(year, said.month, 1), date(year + 1, said.month, 1)) if rough else _year(year)


def _season(name: str, which: str, said: date) -> _Span:
    first_month, length = _SEASONS[name]
    start = date(said.year, first_month, 1)
    if which == "last":  # the last one over by the day it was said
        while _add_months(start, length) > said:
            start = date(start.year - 1, first_month, 1)
    elif which == "next":
        while start <= said:
            start = date(start.year + 1, first_month, 1)
    elif start > said:  # "this summer" said in spring is the coming one; said in winter, the one before
        start = start if which == "this" else date(start.year - 1, first_month, 1)
    return _rough(start, _add_months(start, length))


def _relative(which: str, unit: str, said: date) -> _Span | None:
    """ "last week", "this month", "next year", "last summer", "last Saturday", "past week"."""
    step = {"last": -1, "past": -1, "previous": -1, "this": 0, "next": 1}[which]
    if unit in _SEASONS:
        return _season(unit, which, said)
    if unit in _WEEKDAYS:
        back = (said.weekday() - _WEEKDAYS.index(unit)) % 7 or 7
        if which in ("last", "past", "previous"):
            return _day(said - timedelta(days=back))
        ahead = (_WEEKDAYS.index(unit) - said.weekday()) % 7 or 7
        return _day(said + timedelta(days=ahead)) if which == "next" else None
    if unit == "weekend":
        saturday = said - timedelta(days=(said.weekday() - 5) % 7 or 7) + timedelta(weeks=step + 1 if step > 0 else 0)
        return _rough(saturday, saturday + timedelta(days=2))
    if unit == "week":
        if which == "past":
            return _rough(said - timedelta(weeks=1), said + timedelta(days=1))
        monday = said - timedelta(days=said.weekday()) + timedelta(weeks=step)
        return _rough(monday, monday + timedelta(weeks=1))
    if unit == "month":
        return _month(_add_months(said, step))
    return _year(said.year + step)


def _calendar(match: re.Match, said: date) -> _Span | None:
    """ "May 2023", "3 May 2023", "May 3rd, 2023", "in May" (the last May by then), "on 3 May"."""
    month = _MONTHS[match["month"]]
    day = match["day1"] or match["day2"]
    year = int(match["year"]) if match["year"] else None
    if year is None and not day and not match["lead"]:
        return None  # "may" and "march" alone are mostly verbs, "June" a name: "in May" is the month
    if year is None:
        if not _PAST.search(match.string):
            return None  # "starts school in September": this one or the next, the clause does not say
        year = said.year if (month, int(day or 1)) <= (said.month, said.day) else said.year - 1
    try:
        return _day(date(year, month, int(day))) if day else _month(date(year, month, 1))
    except ValueError:
        return None


# Each expression of a time, with what makes its span from the match and the day it was said.
_EXPRESSIONS: list[tuple[re.Pattern, Callable[[re.Match, date], _Span | None]]] = [
    (
        re.compile(r"\b(?P<y>(?:19|20)\d{2})-(?P<m>\d{2})-(?P<d>\d{2})\b"),
        lambda m, said: _day(date(int(m["y"]), int(m["m"]), int(m["d"]))),
    ),
    (re.compile(r"\bthe day before yesterday\b"), lambda m, said: _day(said - timedelta(days=2))),
    (re.compile(r"\b(?:yesterday|last night)\b"), lambda m, said: _day(said - timedelta(days=1))),
    (re.compile(r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b"), lambda m, said: _day(said)),
    (re.compile(r"\btomorrow\b"), lambda m, said: _day(said + timedelta(days=1))),
    (
        re.compile(rf"\b{_COUNT} (?P<unit>day|week|month|year)s? (?:ago|back|earlier)\b"),
        lambda m, said: _ago(m["count"], m["unit"], said),
    ),
    (
        re.compile(
            r"\b(?P<which>last|this|next|past|previous) (?P<unit>week|weekend|month|year|"
            + "|".join([*_SEASONS, *_WEEKDAYS])
            + r")\b"
        ),
        lambda m, said: _relative(m["which"], m["unit"], said),
    ),
    (
        re.compile(
            rf"(?P<lead>\b(?:in|on|since|until|till|from|by|during|of|early|late|mid|last|this) )?"
            rf"(?:\b(?P<day1>\d{{1,2}}){_ORDINAL} (?:of )?)?\b{_MONTH}(?: (?P<day2>\d{{1,2}}){_ORDINAL}\b)?"
            rf"(?:,? {_YEAR})?\b"
        ),
        _calendar,
    ),
    (
        re.compile(
            rf"\b(?P<lead>in|since|until|till|from|to|by|during|of|around|about|circa|early|late|mid|back in|and) "
            rf"{_YEAR}\b(?![-/]\d)"
        ),
        lambda m, said: _year(int(m["year"])),
    ),
]
# A clause in the past tense (roughly): a month it names without its year is the last one by then.
_PAST = re.compile(
    r"\b(?:\w+ed|was|were|had|did|went|got|made|took|saw|met|came|left|began|bought|ran|found|gave|told|spent|won"
    r"|lost|sold|wrote|drove|flew|moved|became|used to)\b"
)
# What a time is to the statement, by the words just before it.
_STARTS = re.compile(r"\b(?:since|from|starting|beginning)\s+(?:(?:in|on|about|around)\s+)?$")
_ENDS = re.compile(r"\b(?:until|till|til|up to|up until|through|to)\s+(?:(?:in|on|about|around)\s+)?$")
_ROUGHLY = re.compile(r"\b(?:about|around|roughly|approximately|circa|sometime|some time)\s+(?:in\s+)?$")
_IGNORED = re.compile(r"\b(?:before|after|by|every|each)\s+(?:(?:in|on)\s+)?$")
# A time that is what a statement in the present says, not when it held: "my birthday is on 5 May".
_TIMELESS = re.compile(r"\b(?:is|are|am|'s|'re|'m)\s+(?:(?:in|on|at)\s+)?$")
# A present perfect lasting a while: "I've lived here for three years", "she has been working there for 2 years".
_LASTING = re.compile(
    rf"\b(?:have|has|'ve|'s)\s+(?:been\s+)?\w+(?:\s+\w+){{0,6}}?\s+for\s+(?:the\s+(?:last|past)\s+)?{_COUNT}\s+"
    r"(?P<unit>day|week|month|year)s?\b"
)
# A statement that is over: "used to", "formerly", "is a former ...".
_OVER = re.compile(
    r"\bused to\b|\bformerly\b|\b(?:is|was|am|are|'m)\s+(?:a|an|the|my|their|his|her)?\s*(?:former|ex-)"
    r"|'s\s+(?:a|an)\s+(?:former|ex-)"
)
# Verbs of beginning: dated, the statement holds from then on ("last week I started at Initech").
_BEGINS = re.compile(
    r"\b(?:start(?:s|ed|ing)?|beg[iau]n(?:s|ning)?|join(?:s|ed|ing)?|mov(?:e|es|ed|ing)|bec[oa]me|becoming"
    r"|adopt(?:s|ed|ing)?|married|marr(?:y|ies|ying)|got (?:a new |a |an |my )?(?:job|married|engaged|hired|promoted)"
    r"|(?:was|got|been) (?:hired|promoted|appointed)|enrol(?:l)?(?:s|ed|led|ling)?|signed up|took up|taken up"
    r"|switch(?:es|ed)?|founded|opened|launched|settled)\b"
)


def _spans(text: str, said: date) -> list[tuple[str, _Span, bool]]:
    """Each time the text names, in order: (what it is to the statement: "start", "end" or "at"; its span; whether
    the speaker said it roughly)."""
    found: list[tuple[int, str, _Span, bool]] = []
    taken: list[range] = []
    for pattern, make in _EXPRESSIONS:
        for match in pattern.finditer(text):
            where = range(match.start(), match.end())
            if any(where.start < other.stop and other.start < where.stop for other in taken):
                continue
            try:
                span = make(match, said)
            except ValueError:
                span = None
            if span is None:
                continue
            taken.append(where)
            lead = (match.groupdict().get("lead") or "").strip()
            before = text[: match.start()] + (f"{lead} " if lead else "")
            if _IGNORED.search(before) or _TIMELESS.search(before):
                continue
            role = "start" if _STARTS.search(before) else "end" if _ENDS.search(before) else "at"
            found.append((match.start(), role, span, bool(_ROUGHLY.search(before))))
    return [(role, span, rough) for _, role, span, rough in sorted(found, key=lambda item: item[0])]


def _bound(span: _Span, rough: bool, *, end: bool = False) -> tuple[date, str]:
    return (span.end if end else span.start), TimePrecision.APPROXIMATE if rough else span.precision


def world_time_said(text: str, *, said_on: date) -> WorldTime:
    """When the statement of `text` (a clause, or a statement in the third person) held in the world, its times
    resolved against `said_on`; unknown when it names no time it can read, or only a time to come."""
    lowered = " ".join(text.lower().replace("’", "'").split())
    over = _OVER.search(lowered) is not None
    spans = [(role, span, rough) for role, span, rough in _spans(lowered, said_on) if span.start <= said_on]
    start = next(((span, rough) for role, span, rough in spans if role == "start"), None)
    end = next(((span, rough) for role, span, rough in spans if role == "end"), None)
    at = next(((span, rough) for role, span, rough in spans if role == "at"), None)
    lasting = _LASTING.search(lowered)
    if start is None and lasting is not None:
        count = lasting["count"]
        number = _ROUGH_COUNTS.get(count) or _NUMBERS.get(count) or int(count)
        since = said_on - timedelta(days=round(number * _DAYS[lasting["unit"]]))
        start = (_rough(since, since), True)
    world = UNKNOWN_WORLD_TIME
    if start is not None or end is not None:
        begun: tuple[date | None, str] = _bound(*start) if start is not None else (None, "")
        ended: tuple[date | None, str] = (
            _bound(*end) if end is not None else (None, TimePrecision.UNKNOWN if over else "")
        )
        if begun[0] is not None and ended[0] is not None and ended[0] < begun[0]:
            ended = (None, TimePrecision.UNKNOWN if over else "")
        world = WorldTime(start=begun[0], start_precision=begun[1], end=ended[0], end_precision=ended[1])
    elif at is not None:
        span, rough = at
        day, precision = _bound(span, rough)
        if _BEGINS.search(lowered) and not over:
            world = WorldTime(start=day, start_precision=precision)
        elif precision == TimePrecision.APPROXIMATE:  # roughly then: over the span said ("last week": that week)
            world = WorldTime(start=day, start_precision=precision, end=span.end, end_precision=precision)
        else:  # an event, or a state that held then: over that day, month or year
            world = event_on(day, precision=precision)
    elif over:
        world = WorldTime(end_precision=TimePrecision.UNKNOWN)
    return world
