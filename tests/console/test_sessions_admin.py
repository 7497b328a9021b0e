"""Sessions in the admin: messages paged in order with the cursor shown, formation and close through the services."""

from __future__ import annotations

import pytest
from django.urls import reverse

from conversations.models import Message, Session
from formation.models import FormationJob
from tests.factories import MessageFactory
from tests.formation_support import wait_until

pytestmark = pytest.mark.django_db


def test_the_session_page_pages_its_messages_and_shows_cursor_and_jobs(admin_client, session):
    messages = Message.objects.bulk_create(
        [Message(session=session, role="user", content=f"message number {n:03d}") for n in range(60)]
    )
    session.formed_through_message_id = messages[9].pk
    session.save()
    FormationJob.objects.create(session=session, trigger="cold", status="failed", error="ProviderError: 502")
    url = reverse("admin:conversations_session_change", args=[session.pk])

    first = admin_client.get(url).content.decode()
    second = admin_client.get(url, {"messages_page": 2}).content.decode()

    assert "message number 000" in first and "message number 049" in first and "message number 050" not in first
    assert "message number 050" in second and "message number 059" in second
    assert "Messages (60)" in first and f"after #{messages[9].pk}" in first
    assert "ProviderError: 502" in first
    assert "Form memories now" in first and "Close session" in first


def _formed(session: Session, trigger: str, worker) -> FormationJob:
    return wait_until(
        lambda: FormationJob.objects.filter(session=session, trigger=trigger, status="succeeded").first(),
        timeout=60,
        what=f"formation of the session ({trigger})",
        process=worker,
    )


@pytest.mark.django_db(transaction=True)
def test_form_memories_now_and_close_form_the_session_on_the_worker(admin_client, session, celery_worker_process):
    MessageFactory(session=session, content="I live in Lisbon.", token_count=4)

    admin_client.post(reverse("admin:conversations_session_form_memories", args=[session.pk]))
    assert _formed(session, "explicit", celery_worker_process).message_count == 1

    MessageFactory(session=session, content="I work as a nurse.", token_count=5)
    admin_client.post(reverse("admin:conversations_session_close", args=[session.pk]))
    session.refresh_from_db()
    assert session.closed_at is not None
    assert _formed(session, "closed", celery_worker_process).message_count == 1


@pytest.mark.django_db(transaction=True)
def test_retrying_a_failed_formation_job_forms_its_session(admin_client, session, celery_worker_process):
    Session.objects.filter(pk=session.pk).update(formation_status=Session.FormationStatus.FAILED)
    job = FormationJob.objects.create(session=session, trigger="cold", status="failed", error="boom")

    admin_client.post(
        reverse("admin:formation_formationjob_changelist"),
        {"action": "retry_jobs", "_selected_action": [job.pk]},
    )

    assert _formed(session, "explicit", celery_worker_process)
    session.refresh_from_db()
    assert session.formation_status == Session.FormationStatus.IDLE
