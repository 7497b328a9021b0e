"""The users API: list (cursor pages, filtered by last activity), one user with what is kept counted by kind, the
native export streamed, erasure (idempotent, its record naming the key that asked, unknown users a 404) and the
deletion of one session."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from agents.models import EndUser, ErasureRecord
from conversations.models import Message, Session
from conversations.services.ingestion import MessageInput, session_append_messages
from facts.models import Fact, FactScope
from facts.services.facts import fact_create
from reflections.models import MemoryScope, Reflection
from reflections.services.reflections import reflection_create
from tests.factories import AgentFactory, EndUserFactory, SessionFactory

pytestmark = pytest.mark.django_db


def _conversation(agent, user: str, session: str, text: str) -> Session:
    return session_append_messages(
        agent=agent,
        user_external_id=user,
        session_external_id=session,
        messages=[MessageInput(role="user", content=text), MessageInput(role="assistant", content="Noted.")],
    ).session


def test_users_are_listed_newest_first_in_pages_with_their_last_activity(api, agent):
    now = timezone.now()
    for n in range(5):
        session = _conversation(agent, f"user-{n}", f"chat-{n}", "Hello there")
        Session.objects.filter(pk=session.pk).update(last_activity_at=now - timedelta(days=10 * n))
    EndUserFactory(agent=agent, external_id="never-talked")
    EndUserFactory(agent=AgentFactory(), external_id="someone-elses")

    first = api.get("/api/v1/users", {"page_size": 4}).json()
    second = api.get(first["next"]).json()

    listed = [row["user"] for row in first["results"] + second["results"]]
    assert listed == ["never-talked", "user-4", "user-3", "user-2", "user-1", "user-0"] and second["next"] is None
    assert first["results"][1]["last_active_at"] == (now - timedelta(days=40)).isoformat().replace("+00:00", "Z")
    inactive = api.get("/api/v1/users", {"active_before": (now - timedelta(days=15)).isoformat()}).json()
    assert [row["user"] for row in inactive["results"]] == ["user-4", "user-3", "user-2"]
    active = api.get("/api/v1/users", {"active_after": (now - timedelta(days=15)).isoformat()}).json()
    assert [row["user"] for row in active["results"]] == ["never-talked", "user-1", "user-0"]
    refused = api.get("/api/v1/users", {"active_after": "last tuesday"})
    assert refused.status_code == 400 and "active_after" in refused.json()["error"]["fields"]


def test_one_user_counts_what_is_kept_about_them(api, agent):
    session = _conversation(agent, "gene", "chat-1", "My locker code is 4471")
    gene = session.user
    fact_create(agent=agent, user=gene, scopes=[FactScope.USER], content="Gene's locker code is 4471")
    reflection_create(agent=agent, scope=MemoryScope.USER, user=gene, content="Gene is brief")

    response = api.get("/api/v1/users/gene")

    assert response.status_code == 200
    body = response.json()
    assert body["user"] == "gene" and body["last_active_at"] is not None
    assert (
        body["memory"] | {"current_facts": 1, "sessions": 1, "messages": 2, "buffered_reflections": 1} == body["memory"]
    )
    assert api.get("/api/v1/users/nobody").status_code == 404


def test_the_export_streams_the_native_export_of_the_user(api, agent):
    session = _conversation(agent, "gene", "chat-1", "My locker code is 4471")
    fact_create(agent=agent, user=session.user, scopes=[FactScope.USER], content="Gene's locker code is 4471")
    _conversation(agent, "maria", "chat-2", "I like green tea")

    response = api.get("/api/v1/users/gene/export")

    assert response.status_code == 200 and response["Content-Type"] == "application/x-ndjson"
    rows = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert rows[0]["kind"] == "export" and rows[0]["user"] == "gene"
    assert [row["fields"]["external_id"] for row in rows if row["kind"] == "user"] == ["gene"]
    assert [row["fields"]["content"] for row in rows if row["kind"] == "fact"] == ["Gene's locker code is 4471"]
    assert api.get("/api/v1/users/nobody/export").status_code == 404


def test_erasure_deletes_the_user_names_the_key_that_asked_and_is_idempotent(api, agent):
    session = _conversation(agent, "gene", "chat-1", "My locker code is 4471")
    fact_create(agent=agent, user=session.user, scopes=[FactScope.USER], content="Gene's locker code is 4471")
    _conversation(agent, "maria", "chat-2", "I like green tea")

    first = api.delete("/api/v1/users/gene")
    again = api.delete("/api/v1/users/gene")

    assert first.status_code == 200 and first.json()["already_erased"] is False
    record = ErasureRecord.objects.get()
    assert first.json()["erasure"]["id"] == record.pk and record.requested_by.startswith("api key mem_")
    assert record.requested_by.endswith(f"(tests) of agent {agent.external_id}")
    assert record.deleted_counts["facts.Fact"] == 1 and record.deleted_counts["conversations.Message"] == 2
    assert again.status_code == 200 and again.json()["already_erased"] is True
    assert again.json()["erasure"]["id"] == record.pk and ErasureRecord.objects.count() == 1
    assert not EndUser.objects.filter(external_id="gene").exists()
    assert EndUser.objects.filter(external_id="maria").exists()
    assert api.delete("/api/v1/users/never-seen").status_code == 404


def test_deleting_a_session_deletes_the_conversation_and_keeps_what_was_learnt(api, agent):
    session = _conversation(agent, "gene", "chat-1", "My locker code is 4471")
    other = _conversation(agent, "gene", "chat-2", "I like green tea")
    fact = fact_create(
        agent=agent,
        user=session.user,
        scopes=[FactScope.USER],
        content="Gene's locker code is 4471",
        source_session=session,
        source_messages=list(session.messages.all()),
    )
    reflection_create(agent=agent, scope=MemoryScope.SESSION, user=session.user, session=session, content="Lockers")

    response = api.delete("/api/v1/sessions/chat-1")

    assert response.status_code == 200
    assert (
        response.json()["deleted_counts"] | {"conversations.Message": 2, "conversations.Session": 1}
        == (response.json()["deleted_counts"])
    )
    assert not Session.objects.filter(pk=session.pk).exists() and not Message.objects.filter(session_id=session.pk)
    assert not Reflection.objects.filter(session_id=session.pk).exists()
    kept = Fact.objects.get(pk=fact.pk)
    assert kept.source_session is None and kept.valid_to is None and not kept.source_messages.exists()
    assert Session.objects.filter(pk=other.pk).exists()
    assert api.delete("/api/v1/sessions/chat-1").status_code == 404


def test_a_user_id_with_a_slash_is_reachable(api, agent):
    SessionFactory(user=EndUserFactory(agent=agent, external_id="tenant/42"))

    assert api.get("/api/v1/users/tenant/42").json()["user"] == "tenant/42"
    assert api.get("/api/v1/users/tenant/42/export").status_code == 200
    assert api.get("/api/v1/users/tenant/42/timeline").json()["results"] == []


def test_the_users_routes_and_the_timeline_each_reach_their_view(api, agent):
    """The timeline (under /users/{id}/ as the users API is) is routed before the user's own routes catch the rest."""
    SessionFactory(user=EndUserFactory(agent=agent, external_id="gene"))

    assert set(api.get("/api/v1/users/gene/timeline").json()) == {"next", "results"}
    assert api.get("/api/v1/users/gene").json()["user"] == "gene"
    assert api.get("/api/v1/users/gene/export").status_code == 200
    assert api.delete("/api/v1/users/gene/timeline").status_code == 405  # never an erasure of "gene/timeline"
    assert api.get("/api/v1/users/nobody/timeline").status_code == 404
    assert api.delete("/api/v1/users/gene").status_code == 200
    assert api.get("/api/v1/users/gene/timeline").status_code == 404
