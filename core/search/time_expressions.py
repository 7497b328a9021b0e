"""Time in text: the date a message or fact refers to ("yesterday", "last Saturday", "in May 2023", resolved against
when it was said), whether a search query asks for a time ("When did ...?"), and the period a query names.

Parsing is dateparser's (PyPI, offline, deterministic given the reference date): it finds and resolves relative and
absolute expressions in free text, which a few regular expressions would not. Its search also takes ordinary words
for dates ("may", "we", "sat"), so a match counts only when it holds a digit or a word that is only about time.
About 1 ms a text once loaded; it is called at formation and import, and on a query only when the query holds a word
that can start a time expression (TIME_WORD)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from dateutil.relativedelta import relativedelta

# Words that make a dateparser match about time rather than an ordinary word that happens to parse as a date.
TIME_WORDS = (
    "yesterday|today|tonight|tomorrow|ago|week|weeks|weekend|month|months|year|years|day|days|"
    "monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    "january|february|april|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
TIME_WORD = re.compile(rf"\b({TIME_WORDS})\b|\d", re.IGNORECASE)
# "May" and "March" are months only next to a number ("May 2023", "8 March"); alone they are mostly verbs.
MONTH_VERB = re.compile(r"^\s*(in\s+|on\s+)?(may|march)\s*$", re.IGNORECASE)
ASKS_FOR_TIME = re.compile(
    r"\b(when|what (day|date|month|year|time)|which (day|date|month|year)|how long ago|"
    r"how (many|much) (days|weeks|months|years))\b",
    re.IGNORECASE,
)
_PERIOD_LENGTH = {
    "day": relativedelta(days=1),
    "week": relativedelta(weeks=1),
    "month": relativedelta(months=1),
    "year": relativedelta(years=1),
}


@dataclass(frozen=True)
class Period:
    """Days from `start` to `end`, both included."""

    start: date
    end: date

    def holds(self, day: date | None) -> bool:
        return day is not None and self.start <= day <= self.end


def _settings(reference: datetime) -> dict:
    return {
        "RELATIVE_BASE": reference.replace(tzinfo=None),
        "PREFER_DATES_FROM": "past",  # what people tell a memory mostly happened already; "next month" still resolves
        "RETURN_AS_TIMEZONE_AWARE": False,
    }


# "mid-March 2025", "early 2019": the part of a period is read as the period (dateparser reads neither).
_PART_OF = re.compile(
    r"\b(?:mid|early|late)[- ](?=(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|\d{4})\b)",
    re.IGNORECASE,
)


def _expressions(text: str, *, reference: datetime) -> list[tuple[str, datetime]]:
    if not TIME_WORD.search(text):
        return []
    text = _PART_OF.sub("", text)
    # dateparser loads its language data on import (~0.5 s): imported when a text holds a time word.
    from dateparser.search import search_dates

    found = search_dates(text, languages=["en"], settings=_settings(reference)) or []
    return [
        (phrase, moment)
        for phrase, moment in found
        if TIME_WORD.search(phrase) and not MONTH_VERB.match(phrase) and 1900 <= moment.year <= 2200
    ]


def referred_date(*, text: str, said_at: datetime) -> date | None:
    """The day the first time expression of `text` refers to, resolved against `said_at` (when the text was said or
    written); None when the text names no time."""
    expressions = _expressions(text, reference=said_at)
    return expressions[0][1].date() if expressions else None


def asks_for_time(query: str) -> bool:
    """Whether a query asks when something happened ("When did ...", "What year ...", "How long ago ...")."""
    return bool(ASKS_FOR_TIME.search(query))


def named_period(*, query: str, now: datetime | None = None) -> Period | None:
    """The period a query names ("in May 2023": the month; "last week": that week; "on 8 May 2023": the day),
    relative expressions resolved against `now`; None when it names none."""
    from dateparser.date import DateDataParser  # see _expressions: imported when a query names a time

    now = now or datetime.now(UTC)
    for phrase, _ in _expressions(query, reference=now):
        parser = DateDataParser(languages=["en"], settings=_settings(now) | {"PREFER_DAY_OF_MONTH": "first"})
        data = parser.get_date_data(phrase)
        if data.date_obj is None:
            continue
        length = _PERIOD_LENGTH.get(data.period or "day", _PERIOD_LENGTH["day"])
        start = data.date_obj.date()
        # dateparser fills what a phrase leaves out from `now` ("in 2017" asked in November: 1 November 2017); a year
        # or a month named is the whole calendar year or month.
        if data.period == "year":
            start = start.replace(month=1, day=1)
        elif data.period == "month":
            start = start.replace(day=1)
        elif data.period == "week":
            start -= timedelta(days=start.weekday())
        return Period(start=start, end=start + length - timedelta(days=1))
    return None
