"""The memory tools' side of feedback and expiry: rate_memory passes on what the conversation's user says about a
fact (their own, wrong or outdated: closed; shared memory: held for review), save_memory remembers something for a
while ("for a week"). The MCP server serves the same tools from the registry."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from facts.models import Fact, FactFeedback, FactScope
from facts.services.facts import fact_create

pytestmark = pytest.mark.django_db


def _call(api: Client, name: str, arguments, **conversation):
    body = {"name": name, "arguments": arguments} | conversation
    return api.post("/api/v1/tools/call", body, content_type="application/json").json()


def test_the_user_calls_their_own_fact_outdated_and_it_is_forgotten(api, agent, end_user):
    home = fact_create(agent=agent, user=end_user, scopes=[FactScope.USER], content="Gene lives in Lisbon")

    result = _call(api, "rate_memory", {"id": home.pk, "rating": "outdated", "note": "moved to Porto"}, user="user-1")

    assert result["ok"] is True and result["result"]["outcome"] == "closed", result
    assert Fact.objects.get(pk=home.pk).valid_to is not None
    feedback = FactFeedback.objects.get()
    assert (feedback.user_id, feedback.given_via) == (end_user.pk, "tool")


def test_shared_memory_called_wrong_waits_for_an_operator(api, agent, end_user):
    shared = fact_create(agent=agent, user=None, scopes=[FactScope.AGENT], content="The office opens at nine")

    result = _call(api, "rate_memory", {"id": shared.pk, "rating": "wrong"}, user="user-1")

    assert result["result"]["outcome"] == "pending_review" and "operator" in result["result"]["note"]
    assert Fact.objects.get(pk=shared.pk).valid_to is None


def test_a_bad_rating_or_a_fact_it_cannot_see_is_an_error_the_model_can_fix(api, agent, end_user):
    others = fact_create(
        agent=agent, user=end_user, scopes=[FactScope.USER], content="Gene lives in Lisbon"
    )  # not the conversation's user below

    wrong_rating = _call(api, "rate_memory", {"id": others.pk, "rating": "meh"}, user="user-1")
    unseen = _call(api, "rate_memory", {"id": others.pk, "rating": "wrong"}, user="someone-else")

    assert wrong_rating["ok"] is False and "rating" in wrong_rating["error"]
    assert unseen["ok"] is False and "no memory with id" in unseen["error"]
    assert not FactFeedback.objects.exists()


def test_save_memory_remembers_for_a_while(api, agent):
    result = _call(api, "save_memory", {"content": "Gene's hotel room is number 514", "expires_in": "P7D"}, user="gene")
    past = _call(
        api, "save_memory", {"content": "Gene parks in spot 12", "expires_at": "2001-01-01T00:00:00Z"}, user="gene"
    )

    assert result["ok"] is True and "until" in result["result"]["memory"]
    expires_at = Fact.objects.get(content__contains="514").expires_at
    assert abs(expires_at - (timezone.now() + timedelta(days=7))) < timedelta(minutes=1)
    assert past["ok"] is False and "expires_at is in the past" in past["error"]
    assert past["fields"] == {"expires_at": ["in the past"]}
    assert not Fact.objects.filter(content__contains="spot 12").exists()


def test_a_note_that_holds_a_secret_is_refused_naming_the_note(api, agent, end_user):
    # A note closes the user's fact with it as the reason (memory's history): screened as save_memory's content is.
    home = fact_create(agent=agent, user=end_user, scopes=[FactScope.USER], content="Gene lives in Lisbon")

    result = _call(
        api, "rate_memory", {"id": home.pk, "rating": "outdated", "note": "new flat, door code is 4471"}, user="user-1"
    )

    assert result["ok"] is False and result["fields"] == {"note": ["holds a secret (password or PIN)"]}
    assert "4471" not in result["error"]
    assert Fact.objects.get(pk=home.pk).valid_to is None and not FactFeedback.objects.exists()
