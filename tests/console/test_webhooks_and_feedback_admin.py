"""The console's webhook pages (an endpoint saved through the service, so a refused URL is a form error; the delivery
log with redelivery) and the feedback page (an operator accepts feedback, closing the fact, or dismisses it)."""

from __future__ import annotations

import pytest

from facts.models import Fact, FactFeedback, FactScope
from facts.services.facts import fact_create
from facts.services.feedback import fact_feedback_give
from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from webhooks.services.endpoints import webhook_endpoint_create
from webhooks.services.events import webhook_events_dispatch

pytestmark = pytest.mark.django_db


def test_an_endpoint_is_added_with_a_generated_secret_and_a_refused_url_is_a_form_error(admin_client, agent, settings):
    added = admin_client.post(
        "/admin/webhooks/webhookendpoint/add/",
        {"agent": agent.pk, "url": "http://127.0.0.1:9/hooks", "event_types": ["fact.created"], "is_active": "on"},
    )
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    refused = admin_client.post(
        "/admin/webhooks/webhookendpoint/add/",
        {"agent": agent.pk, "url": "http://10.0.0.1/hooks", "event_types": ["fact.created"]},
    )

    assert added.status_code == 302, added.content.decode()[:2000]
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.secret.startswith("whsec_") and endpoint.event_types == ["fact.created"]
    assert refused.status_code == 200 and "private address" in refused.content.decode()
    assert WebhookEndpoint.objects.count() == 1


def test_failed_deliveries_are_listed_and_redelivered(admin_client, agent, end_user):
    webhook_endpoint_create(agent=agent, url="http://127.0.0.1:9/hooks")
    fact_create(agent=agent, user=end_user, scopes=[FactScope.USER], content="Gene likes tea")
    [delivery_id] = webhook_events_dispatch(event_ids=list(WebhookEvent.objects.values_list("pk", flat=True)))
    delivery = WebhookDelivery.objects.get(pk=delivery_id)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(status="failed", attempts=9, last_error="HTTP 500: oops")

    listed = admin_client.get("/admin/webhooks/webhookdelivery/?status__exact=failed")
    admin_client.post("/admin/webhooks/webhookdelivery/", {"action": "redeliver", "_selected_action": [delivery.pk]})

    assert "HTTP 500: oops" in listed.content.decode()
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("pending", 0)


def test_feedback_waiting_for_review_is_accepted_or_dismissed(admin_client, agent, end_user):
    shared = fact_create(agent=agent, user=None, scopes=[FactScope.AGENT], content="The office opens at nine")
    other = fact_create(agent=agent, user=None, scopes=[FactScope.AGENT], content="Parking is free")
    accept = fact_feedback_give(fact=shared, rating="outdated", note="ten now", user=end_user, via="api")
    dismiss = fact_feedback_give(fact=other, rating="wrong", user=end_user, via="api")

    page = admin_client.get("/admin/facts/factfeedback/?outcome__exact=pending_review")
    admin_client.post("/admin/facts/factfeedback/", {"action": "accept", "_selected_action": [accept.pk]})
    admin_client.post("/admin/facts/factfeedback/", {"action": "dismiss", "_selected_action": [dismiss.pk]})

    assert "ten now" in page.content.decode()
    assert Fact.objects.get(pk=shared.pk).valid_to is not None and Fact.objects.get(pk=other.pk).valid_to is None
    assert set(FactFeedback.objects.values_list("outcome", flat=True)) == {"accepted", "dismissed"}
    fact_page = admin_client.get(f"/admin/facts/fact/{other.pk}/change/").content.decode()
    agent_page = admin_client.get(f"/admin/agents/agent/{agent.pk}/change/").content.decode()
    assert "wrong 1" in fact_page and "wrong 1, outdated 1" in agent_page
