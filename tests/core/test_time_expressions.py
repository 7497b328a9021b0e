"""The period a question names (core.search.time_expressions.named_period): a year or a month named is the whole
calendar year or month, whatever day of the year the question is asked on."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from core.search.time_expressions import Period, named_period

ASKED_IN_NOVEMBER = datetime(2026, 11, 27, 14, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "period"),
    [
        ("Where did the user work in 2017?", Period(start=date(2017, 1, 1), end=date(2017, 12, 31))),
        ("What was her job in May 2023?", Period(start=date(2023, 5, 1), end=date(2023, 5, 31))),
        ("Where did he live last year?", Period(start=date(2025, 1, 1), end=date(2025, 12, 31))),
        ("What did she do last month?", Period(start=date(2026, 10, 1), end=date(2026, 10, 31))),
        ("What happened last week?", Period(start=date(2026, 11, 16), end=date(2026, 11, 22))),
        ("What did he do on 8 May 2023?", Period(start=date(2023, 5, 8), end=date(2023, 5, 8))),
    ],
)
def test_a_named_year_or_month_is_the_whole_calendar_year_or_month(query, period):
    assert named_period(query=query, now=ASKED_IN_NOVEMBER) == period


def test_a_question_naming_no_time_names_no_period():
    assert named_period(query="Where does the user work?", now=ASKED_IN_NOVEMBER) is None


@pytest.mark.parametrize(
    ("query", "period"),
    [
        ("Where did she live in mid-March 2025?", Period(start=date(2025, 3, 1), end=date(2025, 3, 31))),
        ("What was he doing in early May 2019?", Period(start=date(2019, 5, 1), end=date(2019, 5, 31))),
        ("What was she doing for work in late 2019?", Period(start=date(2019, 1, 1), end=date(2019, 12, 31))),
    ],
)
def test_a_part_of_a_month_or_year_is_read_as_the_month_or_year(query, period):
    assert named_period(query=query, now=ASKED_IN_NOVEMBER) == period
