"""The timeline (facts.selectors.timeline): what changed about a user or an entity, in world-time order."""

from __future__ import annotations

from datetime import UTC, date

import pytest

from facts.models import Entity, Fact, FactScope, FactWriter
from facts.selectors.timeline import (
    Happened,
    PlacedBy,
    timeline_read,
    timeline_scope_of_entity,
    timeline_scope_of_user,
)
from facts.services.facts import fact_close, fact_create, fact_supersede, fact_world_end, facts_scope_change
from facts.world_time import TimePrecision, WorldTime
from tests.factories import EndUserFactory, MessageFactory, SessionFactory
from tests.graph_support import GLOBEX, MARIA, relation_stated

pytestmark = pytest.mark.django_db


def _said(agent, user, content, **world):
    return fact_create(agent=agent, user=user, scopes=[FactScope.USER], content=content, world_time=WorldTime(**world))


def _summary(page):
    return [(entry.fact.content, entry.happened, entry.placed_by, entry.at) for entry in page.entries]


def test_a_users_changes_come_in_world_time_order_with_what_happened(agent, end_user):
    denver = _said(agent, end_user, "The user lives in Denver", start=date(2019, 1, 1), start_precision="year")
    _said(agent, end_user, "The user likes tea")  # no world time: placed by the day it was recorded
    message = MessageFactory(session=SessionFactory(user=end_user), content="I moved to Boulder in May 2023")
    ended = fact_world_end(
        fact=denver, end=date(2023, 5, 1), end_precision=TimePrecision.MONTH, reason="moved", source_messages=[message]
    )
    _said(agent, end_user, "The user lives in Boulder", start=date(2023, 5, 1), start_precision="month")
    other_user = EndUserFactory(agent=agent)
    _said(agent, other_user, "The other user lives in Paris", start=date(2020, 1, 1), start_precision="year")

    page = timeline_read(scope=timeline_scope_of_user(agent=agent, user=end_user))

    today = ended.formed_at.astimezone(UTC).date()
    assert _summary(page) == [
        ("The user lives in Denver", Happened.STARTED, PlacedBy.START, date(2019, 1, 1)),
        ("The user lives in Denver", Happened.ENDED, PlacedBy.END, date(2023, 5, 1)),
        ("The user lives in Boulder", Happened.STARTED, PlacedBy.START, date(2023, 5, 1)),
        ("The user likes tea", Happened.STARTED, PlacedBy.RECORDED, today),
    ]
    ending = page.entries[1]
    assert ending.fact.pk == ended.pk and ending.fact.version == 2 and ending.reason == "moved"
    assert [m.pk for m in ending.messages] == [message.pk] and ending.messages[0].session.external_id
    assert page.next_after is None


def test_corrections_and_deletions_are_entries_and_a_new_scope_is_none(agent, end_user):
    fact = _said(agent, end_user, "The user works at Acme")
    corrected = fact_supersede(fact=fact, content="The user works at Acme Corp", reason="typo")
    facts_scope_change(
        facts=[corrected], scopes=[FactScope.USER, FactScope.AGENT], reason="shared", written_by=FactWriter.OPERATOR
    )
    message = MessageFactory(session=SessionFactory(user=end_user), content="Forget where I work")
    rescoped = Fact.objects.get(lineage=fact.lineage, valid_to__isnull=True)
    fact_close(fact=rescoped, reason="forget it", closed_by_messages=[message])

    entries = timeline_read(scope=timeline_scope_of_user(agent=agent, user=end_user)).entries

    assert [(e.fact.version, e.happened, e.reason) for e in entries] == [
        (1, Happened.STARTED, "created"),
        (2, Happened.CORRECTED, "typo"),
        (3, Happened.CORRECTED, "forget it"),  # the scope change (v3) is no entry; its closing is
    ]
    assert entries[-1].position.closing and [m.pk for m in entries[-1].messages] == [message.pk]
    assert entries[-1].recorded_at == entries[-1].fact.valid_to


def test_pages_resume_after_the_last_entry_and_filter_by_world_time(agent, end_user):
    for year in range(2010, 2020):
        _said(agent, end_user, f"The user did something in {year}", start=date(year, 1, 1), start_precision="year")
    scope = timeline_scope_of_user(agent=agent, user=end_user)

    first = timeline_read(scope=scope, limit=4)
    second = timeline_read(scope=scope, limit=4, after=first.next_after)
    third = timeline_read(scope=scope, limit=4, after=second.next_after)
    filtered = timeline_read(scope=scope, time_from=date(2012, 6, 1), time_to=date(2015, 1, 1))

    years = [entry.at.year for page in (first, second, third) for entry in page.entries]
    assert years == list(range(2010, 2020)) and third.next_after is None
    assert [entry.at.year for entry in filtered.entries] == [2013, 2014, 2015]


def test_an_entitys_timeline_holds_the_facts_that_stated_its_relations(agent, end_user):
    job = _said(agent, end_user, "Maria works at Globex", start=date(2021, 3, 1), start_precision="month")
    relation_stated(fact=job, subject=MARIA, predicate="works_at", object=GLOBEX)
    fact_world_end(fact=job, end=date(2024, 1, 1), end_precision="year", reason="she left")
    _said(agent, end_user, "The user likes tea")

    maria = Entity.objects.get(agent=agent, name="Maria")
    entries = timeline_read(scope=timeline_scope_of_entity(entity=maria)).entries

    assert [(e.fact.content, e.happened, e.at) for e in entries] == [
        ("Maria works at Globex", Happened.STARTED, date(2021, 3, 1)),
        ("Maria works at Globex", Happened.ENDED, date(2024, 1, 1)),
    ]
    stranger = EndUserFactory(agent=agent)
    seen_by_stranger = timeline_scope_of_entity(entity=maria, seen_by=stranger, conversation=True)
    assert timeline_read(scope=seen_by_stranger).entries == []


def test_a_start_learnt_with_the_end_places_the_beginning_too(agent, end_user):
    paris = _said(agent, end_user, "The user lived in Paris")
    learnt = WorldTime(start=date(2025, 4, 1), start_precision="month", end=date(2026, 6, 1), end_precision="month")
    fact_supersede(fact=paris, content=paris.content, reason="moved", world_time=learnt)  # as the admin's form does

    page = timeline_read(scope=timeline_scope_of_user(agent=agent, user=end_user))

    assert _summary(page) == [
        ("The user lived in Paris", Happened.STARTED, PlacedBy.START, date(2025, 4, 1)),
        ("The user lived in Paris", Happened.ENDED, PlacedBy.END, date(2026, 6, 1)),
    ]
