"""Feedback on a fact over the API: recorded and counted; a user's wrong or outdated on their own fact closes it (kept
as history, the rating its reason); agent-wide or curated memory, and anything harmful, waits for an operator (a
review.pending webhook event), who closes the fact or dismisses the feedback. Bad input is a 400 naming the field,
an unknown or invisible fact a 404, and nothing stored changes."""

from __future__ import annotations

import pytest

from facts.models import Fact, FactFeedback, FactScope, FactWriter
from facts.selectors.feedback import fact_feedback_counts
from facts.services.facts import fact_create
from facts.services.feedback import fact_feedback_accept, fact_feedback_dismiss
from tests.factories import EndUserFactory
from webhooks.models import WebhookEvent
from webhooks.services.endpoints import webhook_endpoint_create

pytestmark = pytest.mark.django_db


def _fact(agent, user, scopes, content, written_by=FactWriter.FORMATION):
    return fact_create(agent=agent, user=user, scopes=scopes, content=content, written_by=written_by)


def _feedback(api, fact_id, **body):
    return api.post(f"/api/v1/facts/{fact_id}/feedback", body, content_type="application/json")


def test_a_user_s_outdated_on_their_own_fact_closes_it_with_the_reason(api, agent, end_user):
    home = _fact(agent, end_user, [FactScope.USER], "Gene lives in Lisbon")

    response = _feedback(api, home.pk, rating="outdated", note="I moved to Porto", user=end_user.external_id)

    assert response.status_code == 201, response.json()
    assert response.json()["outcome"] == "closed" and response.json()["user"] == end_user.external_id
    home.refresh_from_db()
    assert home.valid_to is not None and home.closed_reason == "reported outdated by its user: I moved to Porto"
    assert FactFeedback.objects.get().fact_id == home.pk  # the feedback is kept with the version it closed


def test_useful_is_recorded_and_counted_across_versions(api, agent, end_user):
    fact = _fact(agent, end_user, [FactScope.USER], "Gene likes tea")

    for _ in range(2):
        assert _feedback(api, fact.pk, rating="useful").json()["outcome"] == "recorded"
    _feedback(api, fact.pk, rating="wrong")  # the agent's own: recorded, the fact stays

    assert fact_feedback_counts(lineage=fact.lineage) == {"useful": 2, "wrong": 1}
    assert Fact.objects.get(pk=fact.pk).valid_to is None


@pytest.mark.parametrize(
    ("scopes", "written_by", "rating"),
    [
        ([FactScope.AGENT], FactWriter.FORMATION, "wrong"),  # every user sees it: one user cannot remove it for all
        ([FactScope.USER], FactWriter.API, "outdated"),  # an operator curated it
        ([FactScope.USER], FactWriter.FORMATION, "harmful"),  # an operator should see what did harm
    ],
)
def test_shared_curated_or_harmful_waits_for_review(api, agent, end_user, scopes, written_by, rating):
    webhook_endpoint_create(agent=agent, url="http://127.0.0.1:9/hooks", event_types=["review.pending"])
    fact = _fact(agent, end_user if FactScope.USER in scopes else None, scopes, "The office opens at nine", written_by)

    response = _feedback(api, fact.pk, rating=rating, note="it opens at ten", user=end_user.external_id)

    assert response.json()["outcome"] == "pending_review"
    assert Fact.objects.get(pk=fact.pk).valid_to is None  # until an operator decides
    event = WebhookEvent.objects.get(event_type="review.pending")
    assert event.data["review"] == {"kind": "fact_feedback", "id": response.json()["id"]}
    assert event.data["rating"] == rating and event.data["fact"]["id"] == fact.pk


def test_an_operator_closes_the_fact_or_dismisses_the_feedback(api, agent, end_user):
    shared = _fact(agent, None, [FactScope.AGENT], "The office opens at nine")
    first = FactFeedback.objects.get(pk=_feedback(api, shared.pk, rating="outdated").json()["id"])
    second = FactFeedback.objects.get(pk=_feedback(api, shared.pk, rating="wrong").json()["id"])

    fact_feedback_dismiss(feedback=second, decided_by="admin:ops")
    fact_feedback_accept(feedback=first, decided_by="admin:ops")

    shared.refresh_from_db()
    assert shared.valid_to is not None and shared.closed_reason == "reported outdated, closed on review"
    assert FactFeedback.objects.get(pk=second.pk).outcome == "dismissed"
    assert FactFeedback.objects.get(pk=first.pk).decided_by == "admin:ops"


def test_bad_feedback_is_refused_naming_the_field_and_changes_nothing(api, agent, end_user):
    fact = _fact(agent, end_user, [FactScope.USER], "Gene likes tea")
    other_users_fact = _fact(agent, EndUserFactory(agent=agent), [FactScope.USER], "Maria likes coffee")

    bad_rating = _feedback(api, fact.pk, rating="meh", user=end_user.external_id)
    long_note = _feedback(api, fact.pk, rating="wrong", note="x" * 1001, user=end_user.external_id)
    unknown = _feedback(api, 10**9, rating="wrong")
    not_theirs = _feedback(api, other_users_fact.pk, rating="wrong", user=end_user.external_id)

    assert bad_rating.status_code == 400 and "rating" in bad_rating.json()["error"]["fields"]
    assert long_note.status_code == 400 and "note" in long_note.json()["error"]["fields"]
    assert unknown.status_code == 404 and not_theirs.status_code == 404
    assert not FactFeedback.objects.exists()
    assert Fact.objects.filter(valid_to__isnull=True).count() == 2


def test_a_note_that_holds_a_secret_is_refused_naming_the_note(api, agent, end_user):
    # The note would be the closed fact's reason, in its history: screened as a fact's content is.
    home = _fact(agent, end_user, [FactScope.USER], "Gene lives in Lisbon")

    response = _feedback(
        api, home.pk, rating="outdated", note="moved, the new door code is 4471", user=end_user.external_id
    )

    assert response.status_code == 400 and response.json()["error"]["code"] == "sensitive_data"
    assert list(response.json()["error"]["fields"]) == ["note"] and "4471" not in response.content.decode()
    assert not FactFeedback.objects.exists() and Fact.objects.get(pk=home.pk).valid_to is None
