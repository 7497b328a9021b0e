"""A fact's expiry: from that moment the fact leaves fact search (every mode, the small-store path), the context
block's profile, the bundle and get_entity, filtered by the search's own SQL (the embedding row copies the expiry, kept
in step by the database); `as_of` an earlier time and the history still read it; retention then closes it
("expired"). Over the API, an absolute time or a duration; a time in the past, or both, is a 400 naming the field and
stores nothing."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from facts.models import EntityType, Fact, FactEmbedding, FactScope
from facts.selectors.search import facts_search
from facts.services.facts import fact_create, fact_profile_set, facts_expired_close
from facts.services.graph import EntityMention
from formation.services.retention import retention_enforce_all
from reflections.selectors.bundle import memory_bundle_build
from reflections.selectors.context import memory_context_get
from tests.graph_support import USER, relation_stated

pytestmark = pytest.mark.django_db

OTHER_FACTS = [
    "Gene works as a nurse in Lyon",
    "Gene has a sister called Maria",
    "Gene plays the cello on Sundays",
    "Gene is allergic to peanuts",
    "Gene drives a blue bicycle to work",
    "Gene's favourite film is Amelie",
]


def _room(agent, user, expires_in: timedelta) -> Fact:
    for content in OTHER_FACTS:
        fact_create(agent=agent, user=user, scopes=[FactScope.USER], content=content)
    return fact_create(
        agent=agent,
        user=user,
        scopes=[FactScope.USER],
        content="Gene's hotel room is number 514",
        expires_at=timezone.now() + expires_in,
    )


def _found(agent, user, **options) -> list[int]:
    return [hit.fact.pk for hit in facts_search(agent=agent, user=user, query="hotel room number", **options)]


def _expire(fact: Fact) -> None:
    """Time passes: the expiry is now behind us (written as an operator's change would be, the database following)."""
    Fact.objects.filter(pk=fact.pk).update(expires_at=timezone.now())


def test_an_expired_fact_leaves_every_search_mode_at_once(agent, end_user):
    room = _room(agent, end_user, timedelta(days=7))
    for mode in ("hybrid", "semantic", "text"):
        assert room.pk in _found(agent, end_user, mode=mode, record_access=False), mode
    before = timezone.now()

    _expire(room)

    assert FactEmbedding.objects.get(fact=room).expires_at == Fact.objects.get(pk=room.pk).expires_at
    for mode in ("hybrid", "semantic", "text"):
        assert room.pk not in _found(agent, end_user, mode=mode, record_access=False), mode
    assert room.pk in _found(agent, end_user, as_of=before, record_access=False)
    assert room.pk in _found(agent, end_user, include_history=True, record_access=False)
    assert Fact.objects.get(pk=room.pk).valid_to is None  # still current until retention closes it


def test_a_small_store_leaves_out_its_expired_fact(agent, end_user):
    fact_create(agent=agent, user=end_user, scopes=[FactScope.USER], content="Gene likes tea")
    room = fact_create(
        agent=agent,
        user=end_user,
        scopes=[FactScope.USER],
        content="Gene's hotel room is number 514",
        expires_at=timezone.now() + timedelta(hours=1),
    )
    _expire(room)

    found = facts_search(agent=agent, user=end_user, query="anything at all", record_access=False)

    assert [hit.fact.content for hit in found] == ["Gene likes tea"]


def test_the_bundle_leaves_out_an_expired_fact(agent, end_user, session):
    room = _room(agent, end_user, timedelta(days=7))
    _expire(room)

    bundle = memory_bundle_build(
        agent=agent, user=end_user, session=session, query="what is my hotel room number", token_budget=2000
    )

    assert "514" not in bundle.text and "nurse in Lyon" in bundle.text


def test_the_context_block_drops_an_expired_profile_value_when_it_expires(agent, end_user):
    fact_profile_set(agent=agent, user=end_user, key="hotel_room", content="Gene's hotel room is 514", value="514")
    fact_profile_set(
        agent=agent,
        user=end_user,
        key="parking_spot",
        content="Gene parks in spot 12",
        value="12",
        expires_at=timezone.now() + timedelta(seconds=1),
    )
    shown = memory_context_get(agent=agent, user=end_user, session=None).text
    assert "514" in shown and "12" in shown

    time.sleep(1.2)  # the cached block was kept only until the first of its facts expired

    later = memory_context_get(agent=agent, user=end_user, session=None).parts["user"]["profile"]
    assert later == {"hotel_room": "514"}


def test_retention_closes_expired_facts_as_history(agent, end_user):
    room = _room(agent, end_user, timedelta(days=7))
    keeps = Fact.objects.get(content=OTHER_FACTS[0])
    _expire(room)

    assert retention_enforce_all()["expired_facts_closed"] == 1
    assert facts_expired_close() == 0

    room.refresh_from_db()
    assert room.valid_to is not None and room.closed_reason == "expired"
    assert Fact.objects.get(pk=keeps.pk).valid_to is None


def test_remember_this_for_a_week_over_the_api(api, agent):
    response = api.post(
        "/api/v1/facts",
        {"user": "gene", "content": "Gene's hotel room is number 514", "expires_in": "P7D"},
        content_type="application/json",
    )

    assert response.status_code == 201, response.json()
    expires_at = Fact.objects.get().expires_at
    assert abs(expires_at - (timezone.now() + timedelta(days=7))) < timedelta(minutes=1)
    assert response.json()["expires_at"] is not None


def test_an_expiry_alone_changes_in_place_and_null_clears_it(api, agent, end_user):
    fact = fact_create(agent=agent, user=end_user, scopes=[FactScope.USER], content="Gene's hotel room is 514")
    url = f"/api/v1/facts/{fact.pk}"

    set_ = api.patch(url, {"expires_in": "2 days"}, content_type="application/json")
    cleared = api.patch(url, {"expires_at": None}, content_type="application/json")

    assert set_.status_code == 200 and set_.json()["id"] == fact.pk and set_.json()["expires_at"] is not None
    assert cleared.json()["id"] == fact.pk and cleared.json()["expires_at"] is None
    assert Fact.objects.count() == 1 and FactEmbedding.objects.get(fact=fact).expires_at is None


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"expires_at": "2001-01-01T00:00:00Z"}, "expires_at"),
        ({"expires_in": "P7D", "expires_at": "2999-01-01T00:00:00Z"}, "expires_in"),
        ({"expires_in": 604800}, "expires_in"),
        ({"expires_in": "-P1D"}, "expires_in"),
        ({"expires_in": "a week"}, "expires_in"),
    ],
)
def test_a_bad_expiry_is_a_400_naming_the_field_and_stores_nothing(api, agent, body, field):
    response = api.post(
        "/api/v1/facts",
        {"user": "gene", "content": "Gene's hotel room is 514", **body},
        content_type="application/json",
    )

    assert response.status_code == 400 and field in response.json()["error"]["fields"], response.json()
    assert not Fact.objects.exists() and not agent.users.exists()


def test_get_entity_leaves_out_an_expired_fact_unless_asked_for_what_ended(api, agent, end_user):
    room = _room(agent, end_user, timedelta(days=7))
    hotel = EntityMention("Hotel Aurora", EntityType.PLACE)
    relation_stated(fact=room, subject=USER, predicate="stays_at", object=hotel)

    def facts_shown(include_ended: bool) -> list[dict]:
        arguments = {"name": "Hotel Aurora", "include_ended": include_ended}
        body = {"name": "get_entity", "arguments": arguments, "user": end_user.external_id}
        return api.post("/api/v1/tools/call", body, content_type="application/json").json()["result"]["facts"]

    assert [fact["id"] for fact in facts_shown(False)] == [room.pk]
    assert facts_shown(False)[0]["until"] == Fact.objects.get(pk=room.pk).expires_at.isoformat()

    _expire(room)

    assert facts_shown(False) == []
    assert [fact["id"] for fact in facts_shown(True)] == [room.pk]
