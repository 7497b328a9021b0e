"""Webhooks delivered by a real Celery worker to a real local receiver that checks every signature: a receiver down
for a while then up receives every event exactly once (the worker's listener hears the commits and dispatches them),
and a worker killed while sending loses nothing (the delivery is claimed again once its lease has passed). The test
settings retry within a second, with a lease of 4 s."""

from __future__ import annotations

import signal
import time

import pytest
from django.utils import timezone

from memory_project.celery import app
from tests.api_support import api_client_for
from tests.factories import AgentFactory
from tests.webhook_receiver_support import WebhookReceiver, webhook_receiver
from webhooks import task_names
from webhooks.models import WebhookDelivery, WebhookEvent
from webhooks.services.delivery import webhook_deliveries_due
from webhooks.services.endpoints import webhook_endpoint_create

pytestmark = pytest.mark.django_db(transaction=True)


def _wait(condition, *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_a_receiver_down_for_a_while_receives_every_event_exactly_once(celery_worker_process):
    agent = AgentFactory()
    client = api_client_for(agent)
    receiver = WebhookReceiver()
    receiver.up()
    receiver.down()  # its port is known; nothing listens there until up()
    endpoint = webhook_endpoint_create(agent=agent, url=receiver.url, event_types=["fact.created"])
    receiver.secret = endpoint.secret
    try:
        for n in range(5):
            response = client.post(
                "/api/v1/facts",
                {"user": "gene", "content": f"Gene keeps locker number {n} at the gym"},
                content_type="application/json",
            )
            assert response.status_code == 201, response.json()
        _wait(
            lambda: WebhookDelivery.objects.filter(attempts__gte=2).count() == 5,
            timeout=30,
            what="every delivery to fail twice",
        )

        receiver.up()
        receiver.wait_for(5, timeout=30)
        time.sleep(2)  # a second delivery of anything would arrive within a retry

        sent = set(WebhookEvent.objects.values_list("message_id", flat=True))
        assert sorted(event.message_id for event in receiver.accepted) == sorted(sent) and len(sent) == 5
        assert receiver.refused == []  # every request it saw was signed right
        assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"delivered"}
    finally:
        receiver.down()


def test_a_worker_killed_while_sending_loses_no_event(celery_worker_launcher):
    """The delivery is sent by a worker of a queue of its own, killed (SIGKILL) while the receiver holds the request;
    once the lease has passed the delivery is due again, and the next worker delivers it."""
    agent = AgentFactory()
    with webhook_receiver(hold_seconds=10) as receiver:
        endpoint = webhook_endpoint_create(agent=agent, url=receiver.url, event_types=["user.erased"])
        receiver.secret = endpoint.secret
        # Dispatched already (by hand, below): no listener of another worker may send it meanwhile.
        event = WebhookEvent.objects.create(
            agent=agent,
            event_type="user.erased",
            data={"user": "gene"},
            endpoint_ids=[endpoint.pk],
            dispatched_at=timezone.now(),
        )
        delivery = WebhookDelivery.objects.create(event=event, endpoint=endpoint)
        doomed = celery_worker_launcher(queues="webhooks-kill-test")
        app.send_task(task_names.DELIVER, args=([delivery.pk],), queue="webhooks-kill-test")
        _wait(lambda: receiver.arrived == 1, timeout=30, what="the request to reach the receiver")

        doomed.send_signal(signal.SIGKILL)
        doomed.wait(10)
        delivery.refresh_from_db()
        assert (delivery.status, delivery.attempts) == ("sending", 1)  # claimed by the dead worker
        receiver.hold_seconds = 0
        celery_worker_launcher(queues="webhooks-kill-test")  # while the lease runs out

        _wait(lambda: webhook_deliveries_due(limit=10) == [delivery.pk], timeout=15, what="the lease to pass")
        app.send_task(task_names.DELIVER, args=(webhook_deliveries_due(limit=10),), queue="webhooks-kill-test")
        [received] = receiver.wait_for(1, timeout=30)

    assert received.message_id == event.message_id and received.data == {"user": "gene"}
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("delivered", 2)
