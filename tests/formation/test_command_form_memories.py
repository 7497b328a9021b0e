from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from conversations.models import Session
from conversations.services.ingestion import MessageInput, session_append_messages
from facts.models import Fact
from formation.models import FormationJob
from tests.formation_support import wait_until

CONVERSATION = [
    ("user", "Hi! My name is Gene Parker and I live in Lisbon."),
    ("assistant", "Nice to meet you, Gene."),
    ("user", "I work as a nurse. I love hiking in the mountains."),
    ("user", "What should I cook tonight?"),
]


def _session(agent, user: str, session: str, turns=CONVERSATION, idle_minutes: int = 0) -> Session:
    result = session_append_messages(
        agent=agent,
        user_external_id=user,
        session_external_id=session,
        messages=[MessageInput(role=role, content=content) for role, content in turns],
    )
    Session.objects.filter(pk=result.session.pk).update(
        last_activity_at=timezone.now() - timedelta(minutes=idle_minutes)
    )
    return Session.objects.get(pk=result.session.pk)


def _form(*options: str) -> str:
    out = StringIO()
    call_command("form_memories", *options, stdout=out)
    return out.getvalue()


def _formed(session: Session) -> bool:
    session.refresh_from_db()
    return session.formed_through_message_id == session.messages.order_by("pk").last().pk


@pytest.mark.django_db
def test_one_session_is_formed_here_and_a_second_run_finds_nothing(agent):
    target = _session(agent, "gene", "s-1")
    other = _session(agent, "gene", "s-2")

    output = _form("--agent", agent.external_id, "--session", "s-1")

    assert f"formed {agent.external_id}/s-1: 4 messages in 1 runs" in output
    assert _formed(target) and not _formed(other)
    assert "The user's name is Gene Parker." in set(Fact.objects.values_list("content", flat=True))
    assert FormationJob.objects.get(session=target).trigger == FormationJob.Trigger.EXPLICIT
    assert "0 sessions: nothing to form" in _form("--agent", agent.external_id, "--session", "s-1")


@pytest.mark.django_db
def test_a_users_sessions_only(agent):
    gene_sessions = [_session(agent, "gene", "g-1"), _session(agent, "gene", "g-2")]
    maria = _session(agent, "maria", "m-1")

    output = _form("--agent", agent.external_id, "--user", "gene")

    assert "2 sessions: 2 formed" in output
    assert all(_formed(session) for session in gene_sessions) and not _formed(maria)


@pytest.mark.django_db
def test_due_forms_only_sessions_the_triggers_would(agent):
    cold = _session(agent, "gene", "cold", idle_minutes=30)
    too_short = _session(agent, "gene", "short", turns=CONVERSATION[:2], idle_minutes=30)
    active = _session(agent, "gene", "active", idle_minutes=0)

    dry = _form("--due", "--dry-run")
    assert f"would form {agent.external_id}/cold: 4 messages" in dry and "dry run: 1 sessions" in dry
    assert not _formed(cold)

    _form("--due")

    assert _formed(cold) and not _formed(too_short) and not _formed(active)


@pytest.mark.django_db
def test_targets_must_exist_and_be_named():
    with pytest.raises(CommandError, match="name an --agent"):
        _form()
    with pytest.raises(CommandError, match="need --agent"):
        _form("--session", "s-1")
    with pytest.raises(CommandError, match="no agent 'nobody'"):
        _form("--agent", "nobody")


@pytest.mark.django_db(transaction=True)
def test_queue_hands_the_sessions_to_the_workers(agent, celery_worker_process):
    sessions = [_session(agent, "gene", "q-1"), _session(agent, "maria", "q-2")]

    output = _form("--agent", agent.external_id, "--queue")

    assert "2 sessions: 2 queued" in output
    for session in sessions:
        wait_until(
            lambda s=session: _formed(s), timeout=60, what="the worker's formation", process=celery_worker_process
        )
    assert Fact.objects.filter(agent=agent, user__external_id="maria").exists()
