"""World time through the offline provider, formation run for real: what the user says about when things held,
resolved against the day each message was said, ends what it replaces, and fact search ranks what holds now first."""

from datetime import UTC, date, datetime, timedelta

import pytest

from conversations.services.ingestion import MessageInput, session_append_messages
from facts.models import Fact
from facts.selectors.search import facts_search
from facts.world_time import TimePrecision, WorldTime
from formation.services.formation import session_form_memories

MONDAY = datetime(2026, 11, 23, 10, tzinfo=UTC)


def _form(agent, text: str, *, at: datetime = MONDAY, session: str = "s1"):
    appended = session_append_messages(
        agent=agent,
        user_external_id="u1",
        session_external_id=session,
        messages=[MessageInput(role="user", content=text, created_at=at)],
    )
    session_form_memories(session_id=appended.session.pk, trigger="explicit")
    return appended.session


def _world(agent, content: str) -> WorldTime:
    return Fact.objects.get(agent=agent, content=content, valid_to__isnull=True).world_time


@pytest.mark.django_db
def test_a_job_that_ended_and_one_that_began_last_week_and_search_asks_what_holds_now(agent):
    session = _form(agent, "I used to work at Globex, but last week I started a new job at Initech.")

    assert _world(agent, "The user used to work at Globex.") == WorldTime(end_precision=TimePrecision.UNKNOWN)
    initech = _world(agent, "The user started a new job at Initech.")
    assert initech == WorldTime(start=date(2026, 11, 16), start_precision=TimePrecision.APPROXIMATE)
    assert initech.holds_on(date.today())

    hits = facts_search(agent=agent, user=session.user, query="Where does the user work now?", record_access=False)
    assert hits[0].fact.content == "The user started a new job at Initech."


@pytest.mark.django_db
def test_a_past_said_in_the_negative_is_kept_as_what_held_and_ends_the_current_statement(agent):
    _form(agent, "I work at Globex.", at=MONDAY - timedelta(days=400), session="s0")
    _form(agent, "I no longer work at Globex.")

    assert _world(agent, "The user used to work at Globex.") == WorldTime(end_precision=TimePrecision.UNKNOWN)
    assert not _world(agent, "The user works at Globex.").holds_on(MONDAY.date())
    assert not Fact.objects.filter(content__icontains="no longer").exists()


@pytest.mark.django_db
def test_a_move_from_one_city_to_another_ends_the_one_left_where_the_other_begins(agent):
    _form(agent, "I moved from Boston to Denver last year. I don't eat meat anymore.")

    assert _world(agent, "The user used to live in Boston.") == WorldTime(
        end=date(2025, 1, 1), end_precision=TimePrecision.YEAR
    )
    assert _world(agent, "The user lives in Denver.") == WorldTime(
        start=date(2025, 1, 1), start_precision=TimePrecision.YEAR
    )
    assert _world(agent, "The user used to eat meat.").end_precision == TimePrecision.UNKNOWN
    assert Fact.objects.get(content="The user lives in Denver.").key == "home_city"


@pytest.mark.django_db
def test_a_new_home_ends_the_old_one_and_a_new_liking_ends_nothing(agent):
    _form(agent, "I live in Lisbon. I love hiking.", at=MONDAY - timedelta(days=300), session="s0")
    _form(agent, "I moved to Porto last week. I love chess.")

    assert _world(agent, "The user lives in Lisbon.") == WorldTime(
        end=date(2026, 11, 16), end_precision=TimePrecision.APPROXIMATE
    )
    assert _world(agent, "The user lives in Porto.").holds_on(MONDAY.date())
    assert not _world(agent, "The user loves hiking.").known
    assert not _world(agent, "The user loves chess.").known


@pytest.mark.django_db
def test_events_and_beginnings_are_dated_by_the_day_they_were_said(agent):
    _form(agent, "Yesterday I went to a support group. Three years ago I adopted a cat named Luna.")

    assert _world(agent, "The user went to a support group.") == WorldTime(
        start=date(2026, 11, 22), start_precision="day", end=date(2026, 11, 23), end_precision="day"
    )
    assert _world(agent, "The user adopted a cat named Luna.") == WorldTime(
        start=date(2023, 1, 1), start_precision="year"
    )


@pytest.mark.django_db
def test_a_new_job_said_in_a_later_session_ends_the_old_employer_where_it_began(agent):
    _form(agent, "I work at Globex.", at=MONDAY - timedelta(days=400), session="s0")
    session = _form(agent, "Last week I started a new job at Initech.")

    assert _world(agent, "The user works at Globex.") == WorldTime(
        end=date(2026, 11, 16), end_precision=TimePrecision.APPROXIMATE
    )
    ended = Fact.objects.get(content="The user works at Globex.", valid_to__isnull=True)
    sources = list(ended.source_messages.values_list("content", flat=True))
    assert sources == ["Last week I started a new job at Initech."]
    hits = facts_search(agent=agent, user=session.user, query="Where does the user work now?", record_access=False)
    assert hits[0].fact.content == "The user started a new job at Initech."
