"""The English rules that read when a clause's statement held in the world (facts/grammar/world_time_phrases.py),
against a known day it was said: each phrase of the world-time contract resolves to its bounds and precisions."""

from datetime import date

import pytest

from facts.grammar.world_time_phrases import world_time_said
from facts.world_time import TimePrecision, WorldTime, world_time_format

SAID = date(2026, 11, 23)  # a Monday


def _written(world: WorldTime) -> tuple[str | None, str | None]:
    return world_time_format(world.start, world.start_precision), world_time_format(world.end, world.end_precision)


@pytest.mark.parametrize(
    ("text", "held_from", "held_until"),
    [
        # An event: it held over its day, month or year.
        ("Yesterday I went to a support group.", "2026-11-22", "2026-11-23"),
        ("I ran a charity race last Saturday.", "2026-11-21", "2026-11-22"),
        ("on 3 May 2023 I visited Rome", "2023-05-03", "2023-05-04"),
        ("I quit my job last month", "2026-10", "2026-11"),
        ("Melanie painted a lake sunrise last year.", "2025", "2026"),
        ("I went hiking in 2019", "2019", "2020"),
        ("I went camping last week", "~2026-11-16", "~2026-11-23"),
        # A beginning: it holds from then on.
        ("last week I started a new job at Initech", "~2026-11-16", None),
        ("Three years ago I adopted a cat named Luna", "2023", None),
        ("I got married in June 2021", "2021-06", None),
        ("a few years ago I moved to Denver", "~2023-11-01", None),
        # since, for, until, from ... to.
        ("I've lived in Lisbon since 2019", "2019", None),
        ("I have lived here for three years", "~2023-11-23", None),
        ("I worked at Acme until last year", None, "2025"),
        ("I was at Globex from 2015 to 2019", "2015", "2019"),
        ("around 2010 I lived in Oslo", "~2010-01-01", "~2011-01-01"),
        # Over: it ended, when unknown unless said.
        ("I used to work at Globex", None, "ended"),
        ("The user is a former teacher.", None, "ended"),
        ("I used to live in Paris until 2019", None, "2019"),
        # Holds now, start unknown; a time to come, or none read: unknown.
        ("I'm currently working as a nurse", None, None),
        ("I now work at Initech", None, None),
        ("I'm going to Paris next month", None, None),
        ("Caroline attended a support group recently.", None, None),
        ("My birthday is on 5 May", None, None),
        ("I may go to the march", None, None),
        ("My friend June visited", None, None),
    ],
)
def test_a_phrase_resolves_against_the_day_it_was_said(text, held_from, held_until):
    assert _written(world_time_said(text, said_on=SAID)) == (held_from, held_until)


def test_the_same_words_said_on_another_day_resolve_to_that_day():
    world = world_time_said("Yesterday I went to a support group.", said_on=date(2023, 5, 8))
    assert (world.start, world.start_precision, world.end) == (date(2023, 5, 7), TimePrecision.DAY, date(2023, 5, 8))
    assert world_time_said("Three years ago I adopted a cat.", said_on=date(2023, 5, 8)).start == date(2020, 1, 1)


def test_a_statement_that_began_before_it_ended_keeps_both_and_an_end_before_the_start_is_dropped():
    assert _written(world_time_said("I used to live in Rome from 2010 until 2014", said_on=SAID)) == ("2010", "2014")
    assert _written(world_time_said("I worked there since 2020 until 2018", said_on=SAID)) == ("2020", None)
