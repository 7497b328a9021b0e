"""World time in fact search, on real PostgreSQL with the real embedding model: a statement known not to hold at the
time a question asks about (now, a period it names, before or after a statement it names, `holds_at`) ranks below
every one that may, whatever its score; and a question that names the user reads as one the user asks."""

from __future__ import annotations

from datetime import date

import pytest

from facts.models import Fact
from facts.selectors import facts_search
from facts.services.facts import fact_create
from facts.world_time import UNKNOWN_WORLD_TIME, TimePrecision, WorldTime, event_on
from tests.facts.search_support import FILLER


def _month(year: int, month: int) -> tuple[date, str]:
    return date(year, month, 1), TimePrecision.MONTH


def _held(start: tuple[date, str] | None = None, end: tuple[date, str] | None = None) -> WorldTime:
    return WorldTime(
        start=start[0] if start else None,
        start_precision=start[1] if start else "",
        end=end[0] if end else None,
        end_precision=end[1] if end else "",
    )


@pytest.fixture
def dana(agent, end_user) -> dict[str, Fact]:
    """A user who worked at Globex in Denver, then moved to Austin and joined Initech; the old statements ended where
    the new ones began (as formation ends them), and they are worded closer to the questions than the new ones."""

    def stored(content: str, world_time: WorldTime = UNKNOWN_WORLD_TIME) -> Fact:
        return fact_create(agent=agent, user=end_user, scopes=["user"], content=content, world_time=world_time)

    facts = {
        "name": stored("The user's name is Dana."),
        "globex": stored(
            "The user works as a data analyst at Globex, where the user works.",
            _held(start=(date(2017, 1, 1), TimePrecision.YEAR), end=_month(2023, 3)),
        ),
        "initech": stored("The user started a new job at Initech.", _held(start=_month(2023, 3))),
        "denver": stored("The user lives in Denver, the city the user lives in.", _held(end=_month(2022, 7))),
        "austin": stored("The user lives in Austin.", _held(start=_month(2022, 7))),
        "marathon": stored("The user ran the Austin marathon.", event_on(date(2023, 2, 19))),
    }
    for content in FILLER:
        stored(content)
    return facts


def _first(agent, user, query: str, **options) -> Fact:
    return facts_search(agent=agent, user=user, query=query, record_access=False, **options)[0].fact


@pytest.mark.django_db
def test_a_question_about_now_ranks_what_holds_now_above_what_ended(agent, end_user, dana):
    assert _first(agent, end_user, "Where does the user work now?").pk == dana["initech"].pk
    assert _first(agent, end_user, "Which city does the user live in these days?").pk == dana["austin"].pk


@pytest.mark.django_db
def test_an_event_is_not_ended_for_a_question_about_now(agent, end_user, dana):
    assert _first(agent, end_user, "Does the user run marathons now?").pk == dana["marathon"].pk


@pytest.mark.django_db
def test_a_question_about_a_period_ranks_what_may_have_held_then_first(agent, end_user, dana):
    assert _first(agent, end_user, "Where did the user work in 2019?").pk == dana["globex"].pk
    assert _first(agent, end_user, "Where did the user work in 2024?").pk == dana["initech"].pk
    # Initech began in March 2023: a year named is the whole calendar year, not the twelve months from today's month.
    assert _first(agent, end_user, "Where did the user work in 2022?").pk == dana["globex"].pk


@pytest.mark.django_db
def test_before_a_named_statement_finds_the_value_it_replaced(agent, end_user, dana):
    assert _first(agent, end_user, "Where did the user live before Austin?").pk == dana["denver"].pk
    assert _first(agent, end_user, "Where did the user work before joining Initech?").pk == dana["globex"].pk


@pytest.mark.django_db
def test_after_a_named_statement_leaves_out_what_ended_before_it(agent, end_user, dana):
    # Denver ended in July 2022, before Initech began (March 2023); it is worded closer to the question than Austin.
    hits = facts_search(
        agent=agent, user=end_user, query="Where did the user live after joining Initech?", record_access=False
    )
    ranked = [hit.fact.pk for hit in hits]
    assert ranked.index(dana["austin"].pk) < ranked.index(dana["denver"].pk)
    assert ranked.index(dana["denver"].pk) > ranked.index(dana["initech"].pk)  # the statement named stays


@pytest.mark.django_db
def test_holds_at_ranks_what_held_that_day_first(agent, end_user, dana):
    first = _first(agent, end_user, "Where does the user work?", holds_at=date(2020, 6, 1))
    assert first.pk == dana["globex"].pk


@pytest.mark.django_db
def test_a_question_naming_the_user_reads_as_the_users_own(agent, end_user, dana):
    assert _first(agent, end_user, "Where does Dana work now?").pk == dana["initech"].pk
    assert _first(agent, end_user, "Where did Dana's job take her before Initech?").pk == dana["globex"].pk


@pytest.mark.django_db
def test_a_name_that_is_not_the_users_is_searched_as_written(agent, end_user, dana):
    fact_create(agent=agent, user=end_user, scopes=["user"], content="The user's colleague Priya works at Initech.")
    hits = facts_search(agent=agent, user=end_user, query="Where does Priya work?", record_access=False)
    assert hits[0].fact.content == "The user's colleague Priya works at Initech."


def _rough(year: int, month: int, day: int) -> tuple[date, str]:
    return date(year, month, day), TimePrecision.APPROXIMATE


def test_a_rough_span_one_expression_gives_is_one_time_a_state_roughly_ended_later_is_not():
    assert _held(start=_rough(2019, 6, 1), end=_rough(2019, 9, 1)).is_event  # "last summer"
    assert _held(start=_rough(2021, 11, 1), end=_rough(2022, 11, 1)).is_event  # "a few years ago"
    assert _held(start=_rough(2026, 11, 16), end=_rough(2026, 11, 23)).is_event  # "last week"
    assert not _held(start=_rough(2023, 8, 1), end=_rough(2024, 1, 1)).is_event  # dating from August to New Year


@pytest.mark.django_db
def test_a_state_that_roughly_began_and_was_roughly_ended_is_over_for_a_question_about_now(agent, end_user):
    dating = fact_create(
        agent=agent,
        user=end_user,
        scopes=["user"],
        content="The user is dating Elena, a dance teacher.",
        world_time=_held(start=_rough(2023, 8, 1), end=_rough(2024, 1, 1)),
    )
    ended = fact_create(
        agent=agent,
        user=end_user,
        scopes=["user"],
        content="The user and Elena ended their relationship at New Year 2024.",
        world_time=_held(start=_rough(2024, 1, 1)),
    )
    for content in FILLER:
        fact_create(agent=agent, user=end_user, scopes=["user"], content=content)

    hits = facts_search(agent=agent, user=end_user, query="Is the user still dating Elena?", record_access=False)
    ranked = [hit.fact.pk for hit in hits]
    assert ranked.index(ended.pk) < ranked.index(dating.pk)
