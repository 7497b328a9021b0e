"""Formation against a misbehaving provider and a cost guard, on a real worker set up as in production (the formation
queue on a thread pool sharing a database connection pool) talking to the local OpenAI-compatible stub over HTTP:
a 429's Retry-After is honoured; the circuit breaker opens while the provider fails, /health/ says degraded, and
formation resumes by itself once the provider answers again; an agent over its daily budget forms nothing and loses
nothing, then forms everything once the budget is raised; a claim that meets an append in flight comes back."""

from __future__ import annotations

import threading

import psycopg
import pytest
from django.db.models import Count

from agents.models import Agent
from agents.services.api_keys import api_key_create
from conversations.models import Message, Session
from conversations.services.ingestion import MessageInput, session_append_messages
from core.llm.guard import llm_breaker_state, provider_key_for
from core.llm.providers import _cached_llm_provider, set_llm_provider_override
from core.models import JobStatus, LLMCall
from facts.models import Fact
from formation import task_names as formation_tasks
from formation.models import FormationJob
from formation.services.formation_holds import formation_resume_soon, sessions_formation_resume
from formation.services.formation_triggers import formation_request
from formation.tasks import session_form_memories_task
from memory_project.celery import app
from tests.conftest import database_url_of_test_database
from tests.formation_support import celery_workers_paused, wait_until
from tests.llm_stub_server import StubLLMServer, StubReply

TURNS = [
    ("user", "I restore old sailing boats in my garage on weekends."),
    ("assistant", "What are you working on right now?"),
    ("user", "A wooden dinghy from 1962 that my grandfather built."),
]
GUARD_ENV = {
    "LLM_CIRCUIT_FAILURE_THRESHOLD": "2",
    "LLM_CIRCUIT_OPEN_SECONDS": "3",
    "LLM_CIRCUIT_MAX_OPEN_SECONDS": "3",
    "FORMATION_MAX_RETRIES": "8",
}


@pytest.fixture
def stub(settings):
    """The stub, and this process's settings pointing at it (the breaker's key and the holds read them)."""
    server = StubLLMServer()
    with server.running():
        settings.LLM_PROVIDER, settings.LLM_BASE_URL, settings.LLM_API_KEY = "openai", server.base_url, "stub-key"
        settings.LLM_CIRCUIT_FAILURE_THRESHOLD, settings.LLM_CIRCUIT_OPEN_SECONDS = 2, 3
        set_llm_provider_override(None)
        _cached_llm_provider.cache_clear()
        try:
            yield server
        finally:
            _cached_llm_provider.cache_clear()


@pytest.fixture
def formation_worker(stub, celery_worker_launcher):
    """A worker like make run's formation worker (threads, pooled connections), the only one consuming the queues
    while the test runs; it talks to the stub."""
    env = GUARD_ENV | {
        "DJANGO_SETTINGS_MODULE": "tests.settings_llm_from_env",
        "LLM_PROVIDER": "openai",
        "LLM_BASE_URL": stub.base_url,
        "LLM_API_KEY": "stub-key",
        "LLM_TIMEOUT_SECONDS": "30",
        "DATABASE_POOL_MAX_SIZE": "3",
    }
    with celery_workers_paused():
        yield celery_worker_launcher(extra_env=env, pool=("--pool", "threads", "--concurrency", "6"))


def _session(agent: Agent, name: str) -> tuple[Session, list[int]]:
    result = session_append_messages(
        agent=agent,
        user_external_id=f"sailor-{name}",
        session_external_id=name,
        messages=[MessageInput(role=role, content=content) for role, content in TURNS],
    )
    return result.session, [message.pk for message in result.messages]


def _formed(session: Session, last: int) -> bool:
    session.refresh_from_db()
    return session.formation_status == Session.FormationStatus.IDLE and session.formed_through_message_id == last


def _no_duplicate_facts() -> bool:
    return not (
        Fact.objects.filter(valid_to__isnull=True)
        .values("agent", "user", "content_hash")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .exists()
    )


@pytest.mark.django_db(transaction=True)
def test_a_429_is_retried_after_its_retry_after(agent, stub, formation_worker):
    stub.then(StubReply(status=429, retry_after=2))
    session, ids = _session(agent, "boats-429")

    formation_request(session=session, trigger="explicit")
    wait_until(lambda: _formed(session, ids[-1]), timeout=120, what="the formation", process=formation_worker)

    limited, answered = stub.requests_for("extract_facts")
    assert limited.status == 429 and answered.status == 200
    assert answered.received_at - limited.received_at >= 2  # not sent again before the Retry-After
    job = FormationJob.objects.get(session=session, status=JobStatus.SUCCEEDED)
    outcomes = list(
        LLMCall.objects.filter(job_kind="formation", job_id=job.pk, purpose="extract_facts")
        .order_by("pk")
        .values_list("outcome", flat=True)
    )
    assert outcomes == [LLMCall.Outcome.RATE_LIMITED, LLMCall.Outcome.OK]
    assert FormationJob.objects.filter(session=session).count() == 1  # honoured inside the job, not by a retry


@pytest.mark.django_db(transaction=True)
def test_the_breaker_pauses_formation_while_the_provider_fails_and_it_resumes_by_itself(
    client, agent, stub, formation_worker
):
    stub.rate_500 = 1.0  # the provider answers 500 to everything
    sessions = [_session(agent, f"boats-{n}") for n in range(4)]
    for session, _ in sessions:
        formation_request(session=session, trigger="explicit")
    key = provider_key_for(provider_name="openai")

    def paused() -> bool:
        waiting = Session.objects.filter(
            agent=agent, formation_status="waiting", formation_waiting_reason="provider"
        ).count()
        return llm_breaker_state(provider_key=key).state == "open" and waiting >= 2

    wait_until(paused, timeout=120, what="the breaker to open and sessions to wait", process=formation_worker)
    health = client.get("/health/")
    assert health.status_code == 200, health.json()  # degraded, not down
    assert health.json()["status"] == "degraded" and "formation" in health.json()["degraded"]
    assert health.json()["components"]["formation"]["waiting_for_provider"] >= 2
    failed_calls = stub.counts["500"]

    stub.rate_500 = 0.0  # the provider is back

    def all_formed() -> bool:
        sessions_formation_resume()  # what the beat job does every 10 seconds
        return all(_formed(session, ids[-1]) for session, ids in sessions)

    wait_until(all_formed, timeout=180, what="formation to resume", process=formation_worker)
    assert llm_breaker_state(provider_key=key).state == "closed"
    # While open, the provider was not called for every waiting session: at most the probes went out.
    assert failed_calls <= 2 * len(sessions)
    for session, ids in sessions:
        formed = FormationJob.objects.filter(session=session, status=JobStatus.SUCCEEDED, message_count__gt=0)
        assert sum(job.message_count for job in formed) == len(ids)  # every message formed once
    assert Message.objects.filter(session__agent=agent).count() == 4 * len(TURNS)
    assert _no_duplicate_facts()
    assert client.get("/health/").json()["components"]["formation"]["status"] == "up"


@pytest.mark.django_db(transaction=True)
def test_an_agent_over_its_budget_forms_nothing_and_loses_nothing_then_forms_all_once_raised(
    client, agent, stub, formation_worker
):
    agent.llm_daily_token_budget = 1000
    agent.save()
    # Memory work already spent 1,200 tokens of this agent's budget today.
    LLMCall.objects.create(
        agent=agent, purpose="extract_facts", provider="openai", prompt_tokens=1000, completion_tokens=200, outcome="ok"
    )
    sessions = [_session(agent, f"budget-{n}") for n in range(2)]
    for session, _ in sessions:
        formation_request(session=session, trigger="explicit")

    def waiting() -> bool:
        return Session.objects.filter(agent=agent, formation_status="waiting").count() == 2

    wait_until(waiting, timeout=120, what="the sessions to wait for the budget", process=formation_worker)
    assert stub.requests == []  # nothing was asked of the LLM
    assert set(Session.objects.filter(agent=agent).values_list("formation_waiting_reason", flat=True)) == {
        "agent_budget"
    }
    assert not Fact.objects.filter(agent=agent).exists()
    assert all(session.formed_through_message_id is None for session in Session.objects.filter(agent=agent))
    assert Message.objects.filter(session__agent=agent).count() == 2 * len(TURNS)
    _, key = api_key_create(agent=agent)
    status = client.get("/api/v1/sessions/budget-0", headers={"Authorization": f"Bearer {key}"}).json()
    assert status["formation_status"] == "waiting" and status["formation_waiting_reason"] == "agent_budget"
    assert "1,200 of 1,000 tokens" in status["formation_waiting_detail"]
    # The beat job keeps them waiting while the budget is spent.
    assert sessions_formation_resume()["budget"] == 0

    # An operator raises the budget (what the admin's save does).
    agent.llm_daily_token_budget = 1_000_000
    agent.save()
    formation_resume_soon()

    for session, ids in sessions:
        wait_until(lambda s=session, i=ids: _formed(s, i[-1]), timeout=120, what="formation", process=formation_worker)
    assert Fact.objects.filter(agent=agent, valid_to__isnull=True).count() >= 2
    assert LLMCall.objects.filter(agent=agent, outcome="ok").count() > 1


@pytest.mark.django_db(transaction=True)
def test_a_claim_that_meets_an_append_in_flight_comes_back_instead_of_leaving_the_session_queued(
    agent, stub, formation_worker
):
    session, ids = _session(agent, "boats-locked")
    Session.objects.filter(pk=session.pk).update(formation_status=Session.FormationStatus.QUEUED)
    locked, release = threading.Event(), threading.Event()

    def append_in_flight() -> None:
        """Another transaction holding the session's row, as an append does while it stores messages."""
        url = database_url_of_test_database().replace("postgres://", "postgresql://")
        with psycopg.connect(url) as conn, conn.transaction():
            conn.execute("SELECT id FROM conversations_session WHERE id = %s FOR NO KEY UPDATE", [session.pk])
            locked.set()
            release.wait(120)

    holder = threading.Thread(target=append_in_flight)
    holder.start()
    try:
        assert locked.wait(30)
        session_form_memories_task.delay(session.pk, "interval")  # the append's trigger, queued while it holds the row

        def retried() -> bool:
            scheduled = app.control.inspect(timeout=1.0).scheduled() or {}
            return any(
                entry["request"]["name"] == formation_tasks.FORM_SESSION_MEMORIES
                for entries in scheduled.values()
                for entry in entries
            )

        wait_until(retried, timeout=60, what="the claim to meet the lock and retry", process=formation_worker)
    finally:
        release.set()
        holder.join(30)

    wait_until(lambda: _formed(session, ids[-1]), timeout=60, what="the formation", process=formation_worker)
    # No sweep ran: the task's own retry formed the session.
    assert FormationJob.objects.filter(session=session, status=JobStatus.SUCCEEDED).count() == 1
