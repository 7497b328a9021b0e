"""End to end on a real Celery worker (offline LLM): conversations posted through the HTTP API go cold, the beat
sweep queues them, and the worker forms facts with embeddings and source messages, reflections and LLM call
records; after enough sessions, consolidated blobs with past versions and absorbed reflections. Time is controlled
by moving the sessions' activity clock into the past, never by sleeping."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from agents.services.api_keys import api_key_create
from conversations.models import Message, Session
from core.embeddings.spaces import embedding_space_active
from core.models import JobStatus, LLMCall
from facts.models import Fact, FactEmbedding
from formation.models import FormationJob
from formation.tasks import sessions_formation_sweep_task
from reflections.models import ConsolidatedMemory, ConsolidationJob, Reflection
from tests.formation_support import wait_until

USER = "gene"
# Session A: first-person statements the offline provider recognises, a request about answers (a user reflection)
# and a reminder (a session reflection).
SESSION_A = [
    ("user", "Hi! My name is Gene Parker."),
    ("assistant", "Nice to meet you, Gene. What brings you here today?"),
    ("user", "I live in Lisbon."),
    ("assistant", "Lisbon is lovely. What do you do there?"),
    ("user", "I work as a nurse."),
    ("user", "I love hiking. Please keep your answers short."),
    ("user", "Remind me to book the train to Porto."),
]
# Session B, same user: another request (a second, different user reflection).
SESSION_B = [
    ("user", "I love jazz."),
    ("user", "Where can I hear jazz tonight?"),
    ("assistant", "Try the Hot Clube in Principe Real."),
    ("user", "Could you answer in Portuguese from now on?"),
    ("user", "I have a cat named Miso."),
]
# Session A again, days later: a new reminder, so a new session reflection and a second version of its blob.
SESSION_A_LATER = [
    ("user", "I am planning to visit Kyoto in April."),
    ("assistant", "Kyoto in April means cherry blossoms."),
    ("user", "Temples and gardens, mostly. Remind me to check the temple opening hours."),
    ("assistant", "I can suggest a few quieter temples."),
]
FORMATION_TIMEOUT = 180  # the first run on a fresh worker also loads the embedding model


def _post(client, key: str, session_id: str, turns: list[tuple[str, str]]) -> list[int]:
    response = client.post(
        f"/api/v1/sessions/{session_id}/messages",
        {
            "user": USER,
            "messages": [
                {"role": role, "content": content, "idempotency_key": f"{session_id}-{content}"}
                for role, content in turns
            ],
        },
        content_type="application/json",
        headers={"Authorization": f"Bearer {key}"},
    )
    assert response.status_code == 201, response.content
    return [message["id"] for message in response.json()["messages"]]


def _go_cold_and_sweep(session: Session, *, expect_cold: int = 1) -> None:
    Session.objects.filter(pk=session.pk).update(last_activity_at=timezone.now() - timedelta(minutes=15))
    counts = sessions_formation_sweep_task.delay().get(timeout=60)
    assert counts["cold"] == expect_cold, counts


def _wait_formed(session: Session, through: int, worker) -> Session:
    def formed() -> Session | None:
        job = FormationJob.objects.filter(session=session, status=JobStatus.FAILED).first()
        assert job is None, f"formation failed: {job.error}"
        session.refresh_from_db()
        done = session.formed_through_message_id == through and session.formation_status == "idle"
        return session if done else None

    return wait_until(
        formed, timeout=FORMATION_TIMEOUT, what=f"formation of {session} through {through}", process=worker
    )


def _wait_consolidated(*, scope: str, version: int, worker, **key) -> ConsolidatedMemory:
    def consolidated() -> ConsolidatedMemory | None:
        failed = ConsolidationJob.objects.filter(scope=scope, status=JobStatus.FAILED, **key).first()
        assert failed is None, f"consolidation failed: {failed.error}"
        return ConsolidatedMemory.objects.filter(scope=scope, version__gte=version, **key).first()

    return wait_until(consolidated, timeout=60, what=f"the {scope} blob at version {version}", process=worker)


@pytest.mark.django_db(transaction=True)
def test_conversations_become_facts_reflections_and_consolidated_memory(client, agent, celery_worker_process):
    agent.consolidation_threshold_session = 1
    agent.consolidation_threshold_user = 2
    agent.save()
    _, key = api_key_create(agent=agent, name="e2e")
    space = embedding_space_active()

    # Session A: posted, nothing formed while the conversation is live.
    ids_a = _post(client, key, "session-a", SESSION_A)
    session_a = Session.objects.get(agent=agent, external_id="session-a")
    assert sessions_formation_sweep_task.delay().get(timeout=60) == {"cold": 0, "retried": 0, "messages_to_embed": 0}
    assert session_a.formed_through_message_id is None and not Fact.objects.exists()

    _go_cold_and_sweep(session_a)
    _wait_formed(session_a, ids_a[-1], celery_worker_process)

    job_a = FormationJob.objects.get(session=session_a, status=JobStatus.SUCCEEDED)
    assert (job_a.trigger, job_a.message_count, job_a.facts_added) == ("cold", len(SESSION_A), 4)
    expected_sources = {
        "The user's name is Gene Parker.": ids_a[0],
        "The user lives in Lisbon.": ids_a[2],
        "The user works as a nurse.": ids_a[4],
        "The user loves hiking.": ids_a[5],
    }
    facts = {fact.content: fact for fact in Fact.objects.filter(agent=agent, user__external_id=USER)}
    assert set(facts) == set(expected_sources)
    for content, source_id in expected_sources.items():
        fact = facts[content]
        assert fact.valid_to is None and fact.source_session == session_a
        assert list(fact.source_messages.values_list("id", flat=True)) == [source_id]
        embedding = FactEmbedding.objects.get(fact=fact, space=space)
        assert len(embedding.embedding) == space.dimensions

    reflections_a = Reflection.objects.filter(agent=agent, source_session=session_a)
    assert set(reflections_a.values_list("scope", flat=True)) == {"user", "session"}
    short_answers = reflections_a.get(scope="user")
    assert short_answers.content == "The user prefers short answers."
    assert reflections_a.get(scope="session").content == "The user asked to be reminded to book the train to Porto."

    purposes = set(
        LLMCall.objects.filter(agent=agent, job_kind="formation", job_id=job_a.pk, outcome="ok").values_list(
            "purpose", flat=True
        )
    )
    assert purposes == {"extract_facts", "reflect"}  # no reconciliation call: nothing similar existed yet

    # Session scope threshold 1: the session's reflection is consolidated into its blob by a follow-up task.
    blob_a = _wait_consolidated(scope="session", version=1, session=session_a, worker=celery_worker_process)
    session_note = reflections_a.get(scope="session")
    session_note.refresh_from_db()
    assert session_note.absorbed and session_note.consolidated_into == blob_a
    assert session_note.content in blob_a.content
    assert LLMCall.objects.filter(agent=agent, job_kind="consolidation", purpose="consolidate", outcome="ok").exists()
    short_answers.refresh_from_db()
    assert not short_answers.absorbed  # the user buffer holds 1 of 2
    assert not ConsolidatedMemory.objects.filter(agent=agent, scope="user").exists()

    # Session B, same user: the second user reflection fills the user buffer, and the user blob is written.
    ids_b = _post(client, key, "session-b", SESSION_B)
    session_b = Session.objects.get(agent=agent, external_id="session-b")
    _go_cold_and_sweep(session_b)
    _wait_formed(session_b, ids_b[-1], celery_worker_process)
    new_facts = set(Fact.objects.filter(source_session=session_b).values_list("content", flat=True))
    assert new_facts == {"The user loves jazz.", "The user has a cat named Miso."}
    assert Fact.objects.filter(agent=agent, valid_to__isnull=True).count() == 6

    user_blob = _wait_consolidated(scope="user", version=1, user=session_b.user, worker=celery_worker_process)
    absorbed = Reflection.objects.filter(consolidated_into=user_blob, absorbed=True)
    assert absorbed.count() == 2
    assert {r.source_session_id for r in absorbed} == {session_a.pk, session_b.pk}
    assert "short answers" in user_blob.content and "Portuguese" in user_blob.content
    assert len(user_blob.content.split()) <= user_blob.word_limit

    # Session A continues later: formed from its cursor on, and its blob gets a second version.
    ids_a_later = _post(client, key, "session-a", SESSION_A_LATER)
    _go_cold_and_sweep(session_a)
    _wait_formed(session_a, ids_a_later[-1], celery_worker_process)
    later_job = FormationJob.objects.filter(session=session_a, status=JobStatus.SUCCEEDED).latest("id")
    assert later_job.after_message_id == ids_a[-1] and later_job.message_count == len(SESSION_A_LATER)
    assert Fact.objects.get(content="The user plans to visit Kyoto in April.").source_session == session_a

    blob_a = _wait_consolidated(scope="session", version=2, session=session_a, worker=celery_worker_process)
    past = list(blob_a.past_versions.values_list("version", "content"))
    assert [version for version, _ in past] == [1]
    assert session_note.content in past[0][1] and past[0][1] != blob_a.content
    assert Reflection.objects.filter(consolidated_into=blob_a, consolidated_into_version=2).count() == 1

    # Nothing was stored twice: every message once, no fact twice.
    assert Message.objects.filter(session__agent=agent).count() == len(SESSION_A) + len(SESSION_B) + len(
        SESSION_A_LATER
    )
    assert Fact.objects.count() == len(set(Fact.objects.values_list("content_hash", flat=True)))
