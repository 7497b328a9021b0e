"""A worker killed in the middle of a formation (SIGKILL while it waits for the LLM): nothing posted is lost or
stored twice, the abandoned job is marked failed, and the formation completes on another worker once the sweep
(or the broker's redelivery of the unacknowledged task) hands the session on. The workers talk to the LLM over
HTTP (a local stub server speaking the OpenAI protocol) so that the kill lands on a real in-flight request."""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta

import pytest
from django.db.models import Count
from django.utils import timezone

from agents.services.api_keys import api_key_create
from conversations.models import Message, Session
from core.models import JobStatus, LLMCall
from facts.models import Fact
from formation.models import FormationJob
from formation.services.formation_triggers import sessions_formation_sweep
from formation.tasks import session_form_memories_task
from reflections.models import Reflection
from tests.formation_support import celery_workers_paused, wait_until
from tests.llm_stub_server import StubLLMServer, StubReply

# The claim treats a 'running' mark older than twice the task time limit as lost; the workers and this process
# must agree on the limit. Small, so that the window is short; the solo pool enforces no time limit itself.
TIME_LIMIT = 10
TURNS = [
    ("user", "I restore old sailing boats in my garage."),
    ("assistant", "What are you working on right now?"),
    ("user", "A 1962 wooden dinghy called Marguerite."),
    ("assistant", "A lovely project."),
    ("user", "My sister Ana helps me on weekends."),
]
STUB_FACTS = [
    {"content": "The user restores old sailing boats in their garage.", "scope": ["user"], "source": [1]},
    {"content": "The user is restoring a 1962 wooden dinghy called Marguerite.", "scope": ["user"], "source": [3]},
    {"content": "The user's sister Ana helps them restore boats on weekends.", "scope": ["user"], "source": [5]},
]


def _post(client, key: str) -> tuple[int, list[int]]:
    response = client.post(
        "/api/v1/sessions/boats-1/messages",
        {
            "user": "sailor",
            "messages": [
                {"role": role, "content": content, "idempotency_key": f"turn-{number}"}
                for number, (role, content) in enumerate(TURNS)
            ],
        },
        content_type="application/json",
        headers={"Authorization": f"Bearer {key}"},
    )
    assert response.status_code in (200, 201), response.content
    return response.status_code, [message["id"] for message in response.json()["messages"]]


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_formation_loses_nothing_and_another_completes_it(
    client, agent, settings, celery_worker_launcher
):
    settings.CELERY_TASK_TIME_LIMIT = TIME_LIMIT
    settings.CELERY_TASK_SOFT_TIME_LIMIT = TIME_LIMIT - 2
    _, key = api_key_create(agent=agent)
    queue = f"faults-{uuid.uuid4().hex[:8]}"
    release = threading.Event()
    stub = StubLLMServer(
        facts=STUB_FACTS, reflections={"agent": [], "user": [], "session": ["The session was about boat restoring."]}
    )
    # Workers of other tests stay off the default queue: only this test's workers (stub LLM) form.
    with celery_workers_paused(), stub.running():
        stub.then(StubReply(block=release))  # the first LLM request hangs until the test lets it go
        worker_env = {
            "DJANGO_SETTINGS_MODULE": "tests.settings_llm_from_env",
            "LLM_PROVIDER": "openai",
            "LLM_BASE_URL": stub.base_url,
            "LLM_API_KEY": "stub-key",
            "LLM_TIMEOUT_SECONDS": "120",
            "CELERY_TASK_TIME_LIMIT": str(TIME_LIMIT),
            "CELERY_TASK_SOFT_TIME_LIMIT": str(TIME_LIMIT - 2),
        }
        first = celery_worker_launcher(extra_env=worker_env, queues=f"{queue},celery,formation")

        status, posted = _post(client, key)
        assert status == 201 and len(posted) == len(TURNS)
        session = Session.objects.get(agent=agent, external_id="boats-1")
        # Sent to a queue only this worker consumes: the formation to kill runs there.
        session_form_memories_task.apply_async(args=[session.pk, "explicit"], queue=queue)

        wait_until(stub.request_arrived.is_set, timeout=120, what="the worker's first LLM request", process=first)
        session.refresh_from_db()
        abandoned = FormationJob.objects.get(session=session)
        assert session.formation_status == Session.FormationStatus.RUNNING
        assert abandoned.status == JobStatus.RUNNING
        assert stub.requests_for("extract_facts")

        first.kill()  # SIGKILL: no cleanup, the task stays unacknowledged, the session stays 'running'
        first.wait(30)
        release.set()

        # The client, unsure whether its request went through, sends it again: nothing is stored twice.
        status, reposted = _post(client, key)
        assert status == 200 and reposted == posted

        second = celery_worker_launcher(extra_env=worker_env, queues=f"{queue},celery,formation")
        # Time passes: the 'running' mark ages past twice the time limit, the conversation has gone quiet.
        past = timezone.now() - timedelta(seconds=2 * TIME_LIMIT + 1)
        Session.objects.filter(pk=session.pk, formation_status=Session.FormationStatus.RUNNING).update(
            formation_queued_at=past, last_activity_at=timezone.now() - timedelta(minutes=15)
        )
        counts = sessions_formation_sweep()

        def completed() -> bool:
            session.refresh_from_db()
            return (
                session.formed_through_message_id == posted[-1]
                and session.formation_status == Session.FormationStatus.IDLE
                and not FormationJob.objects.filter(session=session, status=JobStatus.RUNNING).exists()
            )

        wait_until(completed, timeout=180, what=f"the formation to complete (sweep: {counts})", process=second)

    # Every posted message stored exactly once.
    assert list(Message.objects.filter(session=session).order_by("id").values_list("id", flat=True)) == posted
    # The abandoned job is failed, the formation that took over succeeded with the same messages.
    abandoned.refresh_from_db()
    assert abandoned.status == JobStatus.FAILED and "abandoned" in abandoned.error
    succeeded = FormationJob.objects.filter(session=session, status=JobStatus.SUCCEEDED, message_count__gt=0)
    assert succeeded.count() == 1
    completion = succeeded.get()
    assert completion.after_message_id is None and completion.message_count == len(TURNS)
    assert completion.trigger in ("sweep", "explicit")  # handed on by the sweep, or by the broker's redelivery
    # No fact twice: each of the stub's facts once, and no two current facts of a scope with the same hash.
    contents = list(Fact.objects.filter(agent=agent).values_list("content", flat=True))
    assert sorted(contents) == sorted(fact["content"] for fact in STUB_FACTS)
    duplicates = (
        Fact.objects.filter(valid_to__isnull=True)
        .values("agent", "user", "content_hash")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
    )
    assert not duplicates.exists()
    assert Reflection.objects.filter(source_session=session).count() == 1
    assert LLMCall.objects.filter(job_kind="formation", job_id=completion.pk, purpose="extract_facts").count() == 1
