"""The profile by category (facts.selectors.profile.profile_by_category): one entry per canonical value with its
source facts, its world time and when it was last mentioned; a state that ended is history, an event stays; only the
person's current filed facts are read."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from facts.models import Fact
from facts.selectors.profile import profile_by_category
from facts.services.facts import fact_create
from facts.world_time import TimePrecision, WorldTime, event_on
from tests.category_support import fact_filed
from tests.factories import EndUserFactory

pytestmark = pytest.mark.django_db
TODAY = date(2024, 6, 1)


def test_one_entry_per_value_with_its_facts_newest_first(agent, end_user):
    first = fact_filed(
        agent,
        end_user,
        "The user took a pottery class",
        "activities",
        "Pottery",
        valid_from=datetime(2024, 1, 5, tzinfo=UTC),
    )
    second = fact_filed(
        agent,
        end_user,
        "The user made a bowl on the wheel",
        "activities",
        "pottery",
        valid_from=datetime(2024, 3, 5, tzinfo=UTC),
    )
    alone = fact_filed(agent, end_user, "The user runs on Sundays", "activities")

    profile = profile_by_category(agent=agent, user=end_user, categories=["activities", "likes"], today=TODAY)

    entries = {entry.value: entry for entry in profile.current["activities"]}
    assert set(entries) == {"pottery", "The user runs on Sundays"}, "one value whatever its case, as last said"
    pottery = entries["pottery"]
    assert ([fact.pk for fact in pottery.facts], pottery.mentions) == ([second.pk, first.pk], 2)
    assert pottery.last_mentioned == second.valid_from and pottery.stands
    assert [fact.pk for fact in entries["The user runs on Sundays"].facts] == [alone.pk]
    assert profile.current["likes"] == [] and profile.history == {} and not profile.truncated


def test_an_ended_state_is_history_an_event_stays_and_the_entry_takes_the_standing_facts_time(agent, end_user):
    fact_filed(
        agent,
        end_user,
        "The user used to work at Globex",
        "work",
        "Globex",
        world_time=WorldTime(
            start=date(2019, 1, 1),
            start_precision=TimePrecision.YEAR,
            end=date(2023, 5, 1),
            end_precision=TimePrecision.MONTH,
        ),
    )
    camping = fact_filed(
        agent,
        end_user,
        "The user went camping on 3 May 2023",
        "events",
        "camping",
        world_time=event_on(date(2023, 5, 3)),
    )
    fact_filed(
        agent,
        end_user,
        "The user works at Initech",
        "work",
        "Initech",
        world_time=WorldTime(start=date(2023, 5, 1), start_precision=TimePrecision.MONTH),
    )

    profile = profile_by_category(
        agent=agent, user=end_user, categories=["work", "events"], include_history=True, today=TODAY
    )

    assert [entry.value for entry in profile.current["work"]] == ["Initech"]
    assert [entry.value for entry in profile.history["work"]] == ["Globex"]
    assert profile.history["work"][0].world_time.end == date(2023, 5, 1)
    assert [[fact.pk for fact in entry.facts] for entry in profile.current["events"]] == [[camping.pk]], (
        "an event happened: it stays"
    )
    assert profile.current["events"][0].world_time.start == date(2023, 5, 3)
    without = profile_by_category(agent=agent, user=end_user, categories=["work"], today=TODAY)
    assert without.history == {}


def test_only_the_persons_current_filed_facts(agent, end_user):
    unfiled = fact_create(agent=agent, user=end_user, scopes=["user"], content="The user likes jazz")
    Fact.objects.filter(pk=unfiled.pk).update(category="", category_value="")  # as formed before categories
    other = EndUserFactory(agent=agent, external_id="someone-else")
    fact_filed(agent, other, "The user likes opera", "likes", "opera")
    shared = fact_filed(agent, None, "Every user gets a free coffee", "likes", "coffee")
    old = fact_filed(agent, end_user, "The user likes tea", "likes", "tea")
    old.valid_to = datetime(2024, 2, 1, tzinfo=UTC)  # a corrected version was never true
    old.save(update_fields=["valid_to"])

    assert profile_by_category(agent=agent, user=end_user, categories=["likes"], today=TODAY).current["likes"] == []
    agent_wide = profile_by_category(agent=agent, user=None, categories=["likes"], today=TODAY)
    assert [[fact.pk for fact in entry.facts] for entry in agent_wide.current["likes"]] == [[shared.pk]]


def test_a_bounded_read_says_it_was_truncated(agent, end_user):
    for number in range(3):
        fact_filed(agent, end_user, f"The user collects stamps from country {number}", "possessions", "stamps")

    profile = profile_by_category(agent=agent, user=end_user, categories=["possessions"], today=TODAY, max_facts=2)

    assert profile.truncated and profile.current["possessions"][0].mentions == 2
