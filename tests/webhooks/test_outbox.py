"""The outbox: an event is written in the transaction of the change it reports, only for endpoints that want it, and
one attempt sends it signed (Standard Webhooks) to a real local receiver, which checks the signature with its own code.
Failed attempts follow the retry schedule; redirects are not followed; a slow endpoint is cut at the deadline."""

from __future__ import annotations

from datetime import date

import pytest
from django.db import transaction

from facts.models import FactScope, FactWriter
from facts.services.facts import fact_close, fact_create, fact_supersede, fact_world_end
from facts.world_time import TimePrecision
from tests.factories import AgentFactory
from tests.webhook_receiver_support import webhook_receiver
from webhooks.models import WebhookDelivery, WebhookEvent, WebhookEventType
from webhooks.services.delivery import webhook_deliveries_due, webhook_deliveries_redeliver, webhook_delivery_attempt
from webhooks.services.endpoints import webhook_endpoint_create, webhook_endpoint_update
from webhooks.services.events import webhook_events_dispatch
from webhooks.services.signing import webhook_signature

pytestmark = pytest.mark.django_db


def test_the_signature_is_standard_webhooks_one():
    """The Standard Webhooks specification's own example (secret, id, timestamp, body and the signature it gives)."""
    signature = webhook_signature(
        secret="whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        message_id="msg_p5jXN8AQM9LWM0D4loKWxJek",
        timestamp=1614265330,
        body=b'{"test": 2432232314}',
    )

    assert signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def _dispatched() -> list[WebhookDelivery]:
    """What a worker does with the events committed: one delivery per endpoint that wanted each."""
    webhook_events_dispatch(event_ids=list(WebhookEvent.objects.values_list("pk", flat=True)))
    return list(WebhookDelivery.objects.select_related("event").order_by("pk"))


def _user_fact(agent, end_user, content="Gene's birthday is March 15th"):
    return fact_create(agent=agent, user=end_user, scopes=[FactScope.USER], content=content, written_by=FactWriter.API)


def test_no_endpoint_no_event(agent, end_user):
    _user_fact(agent, end_user)

    assert not WebhookEvent.objects.exists()


def test_each_change_of_a_fact_is_an_event_for_the_endpoints_that_want_it(agent, end_user):
    everything = webhook_endpoint_create(agent=agent, url="http://127.0.0.1:9/all")
    closed_only = webhook_endpoint_create(agent=agent, url="http://127.0.0.1:9/closed", event_types=["fact.closed"])
    webhook_endpoint_create(agent=AgentFactory(), url="http://127.0.0.1:9/other-agent")

    fact = _user_fact(agent, end_user)
    successor = fact_supersede(fact=fact, content="Gene's birthday is March 16th", reason="corrected")
    fact_close(fact=successor, reason="the user asked")

    events = list(WebhookEvent.objects.order_by("pk"))
    assert [event.event_type for event in events] == ["fact.created", "fact.updated", "fact.closed"]
    assert all(event.agent_id == agent.pk and event.user_id == end_user.pk for event in events)
    created, updated, closed = (event.data for event in events)
    assert created["fact"]["id"] == fact.pk and created["fact"]["version"] == 1 and created["user"] == "user-1"
    assert updated["fact"] | {"id": successor.pk, "version": 2} == updated["fact"]
    assert updated["previous"] == {"id": fact.pk, "version": 1}
    assert closed["fact"]["closed_reason"] == "the user asked" and closed["fact"]["valid_to"] is not None
    assert [event.endpoint_ids for event in events] == [
        [everything.pk],
        [everything.pk],
        [everything.pk, closed_only.pk],
    ]
    delivered_to = {(d.event.event_type, d.endpoint_id) for d in _dispatched()}
    assert delivered_to == {
        ("fact.created", everything.pk),
        ("fact.updated", everything.pk),
        ("fact.closed", everything.pk),
        ("fact.closed", closed_only.pk),
    }


def test_a_change_in_the_world_is_an_update_whose_version_says_it_ended(agent, end_user):
    webhook_endpoint_create(agent=agent, url="http://127.0.0.1:9/all", event_types=["fact.updated"])
    fact = _user_fact(agent, end_user, content="Gene works at Globex")

    ended = fact_world_end(fact=fact, end=date(2024, 3, 1), end_precision=TimePrecision.MONTH, reason="new job")

    (event,) = WebhookEvent.objects.all()
    assert event.data["fact"]["id"] == ended.pk and event.data["previous"] == {"id": fact.pk, "version": 1}
    world_time = event.data["fact"]["world_time"]
    assert world_time | {"end": "2024-03-01", "end_precision": "month", "holds_now": False} == world_time
    assert event.data["fact"]["valid_to"] is None and event.data["fact"]["expires_at"] is None


def test_a_rolled_back_change_leaves_no_event(agent, end_user):
    webhook_endpoint_create(agent=agent, url="http://127.0.0.1:9/all")

    with transaction.atomic():
        _user_fact(agent, end_user)
        transaction.set_rollback(True)

    assert not WebhookEvent.objects.exists() and not WebhookDelivery.objects.exists()


def test_an_inactive_endpoint_gets_nothing_new(agent, end_user):
    endpoint = webhook_endpoint_create(agent=agent, url="http://127.0.0.1:9/all")
    webhook_endpoint_update(endpoint=endpoint, is_active=False)

    _user_fact(agent, end_user)

    assert not WebhookEvent.objects.exists()


def test_an_attempt_delivers_the_event_signed_to_a_real_receiver(agent, end_user):
    with webhook_receiver() as receiver:
        endpoint = webhook_endpoint_create(agent=agent, url=receiver.url, event_types=["fact.created"])
        receiver.secret = endpoint.secret
        fact = _user_fact(agent, end_user)
        [delivery] = _dispatched()

        outcome = webhook_delivery_attempt(delivery_id=delivery.pk)

        assert outcome is not None and outcome.status == "delivered"
        [received] = receiver.accepted
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("delivered", 1, 204)
    assert received.event_type == "fact.created" and received.data["fact"]["id"] == fact.pk
    assert received.message_id == delivery.event.message_id and received.message_id.startswith("msg_")
    assert received.headers["webhook-signature"].startswith("v1,")
    assert webhook_delivery_attempt(delivery_id=delivery.pk) is None  # delivered: never sent again


def test_a_failing_endpoint_is_retried_on_the_schedule_then_given_up(agent, end_user, settings):
    settings.WEBHOOK_RETRY_SCHEDULE_SECONDS = [0, 0]
    with webhook_receiver(failing=True) as receiver:
        endpoint = webhook_endpoint_create(agent=agent, url=receiver.url)
        receiver.secret = endpoint.secret
        _user_fact(agent, end_user)
        [delivery] = _dispatched()

        outcomes = [webhook_delivery_attempt(delivery_id=delivery.pk) for _ in range(4)]

    assert [outcome.status if outcome else None for outcome in outcomes] == ["pending", "pending", "failed", None]
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("failed", 3, 503)
    assert delivery.last_error.startswith("HTTP 503")
    assert receiver.arrived == 3

    assert webhook_deliveries_redeliver(delivery_ids=[delivery.pk]) == 1
    assert webhook_deliveries_due(limit=10) == [delivery.pk]


def test_the_first_retry_waits_as_the_schedule_says(agent, end_user, settings):
    settings.WEBHOOK_RETRY_SCHEDULE_SECONDS = [300]
    with webhook_receiver(failing=True) as receiver:
        webhook_endpoint_create(agent=agent, url=receiver.url)
        _user_fact(agent, end_user)
        [delivery] = _dispatched()

        outcome = webhook_delivery_attempt(delivery_id=delivery.pk)

    assert outcome is not None and 240 <= (outcome.retry_in or 0) <= 360
    assert webhook_deliveries_due(limit=10) == []  # not before its time


def test_a_redirect_is_not_followed(agent, end_user):
    with webhook_receiver() as elsewhere, webhook_receiver(redirect_to=elsewhere.url) as receiver:
        webhook_endpoint_create(agent=agent, url=receiver.url)
        _user_fact(agent, end_user)
        [delivery] = _dispatched()

        outcome = webhook_delivery_attempt(delivery_id=delivery.pk)

    assert outcome is not None and outcome.status == "pending"
    delivery.refresh_from_db()
    assert delivery.last_status_code == 302 and "redirects are not followed" in delivery.last_error
    assert (receiver.arrived, elsewhere.arrived) == (1, 0)


def test_a_slow_endpoint_is_cut_at_the_deadline(agent, end_user, settings):
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.5
    with webhook_receiver(hold_seconds=3) as receiver:
        webhook_endpoint_create(agent=agent, url=receiver.url)
        _user_fact(agent, end_user)
        [delivery] = _dispatched()

        outcome = webhook_delivery_attempt(delivery_id=delivery.pk)

    assert outcome is not None and outcome.status == "pending"
    delivery.refresh_from_db()
    assert "no answer within 0.5 s" in delivery.last_error


def test_an_address_that_became_private_is_refused_at_send_time(agent, end_user, settings):
    """Checked again at every send: a public name may since resolve to an internal address."""
    with webhook_receiver() as receiver:
        webhook_endpoint_create(agent=agent, url=receiver.url)
        _user_fact(agent, end_user)
        [delivery] = _dispatched()
        settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False

        webhook_delivery_attempt(delivery_id=delivery.pk)

    delivery.refresh_from_db()
    assert delivery.status == "pending" and "refused" in delivery.last_error and "loopback" in delivery.last_error
    assert receiver.arrived == 0


def test_the_erased_event_of_a_hard_deleted_fact_names_it_by_id(agent, end_user):
    from facts.services.facts import facts_erase

    webhook_endpoint_create(agent=agent, url="http://127.0.0.1:9/all", event_types=[WebhookEventType.FACT_ERASED])
    fact = _user_fact(agent, end_user)

    facts_erase(fact_ids=[fact.pk])

    event = WebhookEvent.objects.get()
    assert event.user_id is None and event.data == {
        "agent": agent.external_id,
        "fact": {"id": fact.pk, "lineage": str(fact.lineage)},
    }


def test_formation_reports_a_completed_run_and_the_memory_held_for_review(agent, scripted_llm):
    from conversations.services.ingestion import MessageInput, session_append_messages
    from formation.services.formation import session_form_memories
    from tests.fakes import facts_reply

    webhook_endpoint_create(
        agent=agent, url="http://127.0.0.1:9/all", event_types=["formation.completed", "review.pending"]
    )
    session = session_append_messages(
        agent=agent,
        user_external_id="gene",
        session_external_id="chat-1",
        messages=[MessageInput(role="user", content="Everyone here should know the office opens at nine.")],
    ).session
    scripted_llm.script("extract_facts", facts_reply("The office opens at nine", scope=("agent",)))

    session_form_memories(session_id=session.pk, trigger="explicit")

    completed = WebhookEvent.objects.get(event_type="formation.completed")
    held = WebhookEvent.objects.get(event_type="review.pending")
    assert completed.data["session"] == "chat-1" and completed.data["job"]["status"] == "succeeded"
    assert completed.user_id == session.user_id
    assert held.data["review"]["kind"] == "held_memory" and held.data["reason"] == "agent_scope"


def test_a_failed_formation_run_is_reported(agent, scripted_llm):
    from conversations.services.ingestion import MessageInput, session_append_messages
    from formation.services.formation import session_form_memories

    webhook_endpoint_create(agent=agent, url="http://127.0.0.1:9/all", event_types=["formation.failed"])
    session = session_append_messages(
        agent=agent,
        user_external_id="gene",
        session_external_id="chat-1",
        messages=[MessageInput(role="user", content="I keep bees.")],
    ).session
    scripted_llm.script("extract_facts", *["not json at all"] * 5)

    with pytest.raises(Exception):  # noqa: B017 (whatever the pipeline raises for output it cannot read)
        session_form_memories(session_id=session.pk, trigger="explicit")

    failed = WebhookEvent.objects.get(event_type="formation.failed")
    assert failed.data["job"]["status"] == "failed" and failed.data["job"]["error"]
    assert failed.data["job"]["will_retry"] is False


def test_an_erasure_is_reported_by_ids_after_the_events_about_the_user_went(api, agent, end_user):
    webhook_endpoint_create(agent=agent, url="http://127.0.0.1:9/all")
    _user_fact(agent, end_user)
    assert WebhookEvent.objects.filter(user=end_user).exists()

    api.delete(f"/api/v1/users/{end_user.external_id}")

    [erased] = WebhookEvent.objects.all()  # the fact's event went with the user
    assert erased.event_type == "user.erased" and erased.user_id is None
    assert set(erased.data) == {"agent", "user", "erasure_record"} and erased.data["user"] == end_user.external_id


def test_a_second_dispatch_makes_nothing_twice_and_a_removed_endpoint_gets_nothing(agent, end_user):
    kept = webhook_endpoint_create(agent=agent, url="http://127.0.0.1:9/kept")
    removed = webhook_endpoint_create(agent=agent, url="http://127.0.0.1:9/removed")
    _user_fact(agent, end_user)
    removed.delete()

    first = _dispatched()
    again = _dispatched()

    assert [delivery.endpoint_id for delivery in first] == [kept.pk] and again == first
    assert WebhookEvent.objects.get().dispatched_at is not None
