"""The always-in-context block: content, cache hits, invalidation by every kind of change, ETags, the beat refresh."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

import reflections.signals  # noqa: F401  (connected by ReflectionsConfig.ready() once wired; see the module)
from agents.models import Agent, EndUser
from agents.services.api_keys import api_key_create
from conversations.models import Session
from core.safety.fencing import MEMORY_NOTICE_BLOCK
from facts.services.facts import fact_profile_set
from memory_project.celery import app as celery_app
from reflections.models import ConsolidatedMemory, MemoryScope, Reflection
from reflections.selectors.context import memory_context_build, memory_context_get
from reflections.services.consolidation import consolidated_memory_replace
from reflections.services.reflections import reflection_create
from reflections.tasks import memory_context_refresh_active
from tests.category_support import fact_filed
from tests.factories import AgentFactory, EndUserFactory, SessionFactory
from tests.memory_client_support import MemoryAPIError, memory_client_for


@pytest.fixture
def memories(agent: Agent, end_user: EndUser, session: Session) -> None:
    ConsolidatedMemory.objects.create(agent=agent, scope=MemoryScope.AGENT, content="Answer briefly.", word_limit=1000)
    ConsolidatedMemory.objects.create(
        agent=agent, user=end_user, scope=MemoryScope.USER, content="Gene is a nurse in Lyon.", word_limit=400
    )
    Reflection.objects.create(agent=agent, scope=MemoryScope.AGENT, content="Users like bullet lists.")
    Reflection.objects.create(agent=agent, user=end_user, scope=MemoryScope.USER, content="Gene works <nights> & days.")
    Reflection.objects.create(
        agent=agent, user=end_user, session=session, scope=MemoryScope.SESSION, content="Planning a trip to Porto."
    )
    Reflection.objects.create(
        agent=agent, user=end_user, scope=MemoryScope.USER, content="Absorbed already.", absorbed=True
    )


def test_block_has_blob_and_recent_reflections_per_scope_in_a_stable_layout(agent, end_user, session, memories):
    context = memory_context_build(agent=agent, user=end_user, session=session)

    assert context.text == (
        "<MemoryContext>\n"
        f"{MEMORY_NOTICE_BLOCK}\n"
        "<AgentMemory>\nAnswer briefly.\nRecent:\n- Users like bullet lists.\n</AgentMemory>\n"
        "<UserMemory>\nGene is a nurse in Lyon.\nRecent:\n- Gene works &lt;nights&gt; &amp; days.\n</UserMemory>\n"
        "<SessionMemory>\nRecent:\n- Planning a trip to Porto.\n</SessionMemory>\n"
        "</MemoryContext>"
    )
    assert context.parts["user"]["blob"] == "Gene is a nurse in Lyon."
    assert [r["content"] for r in context.parts["session"]["recent_reflections"]] == ["Planning a trip to Porto."]
    assert context.token_count > 20
    assert memory_context_build(agent=agent, user=end_user, session=session) == context


def test_block_without_user_has_only_agent_memory_and_no_memory_renders_empty(agent, end_user, session, memories):
    agent_only = memory_context_build(agent=agent, user=None, session=None)
    other_agent = AgentFactory()

    assert "<UserMemory>" not in agent_only.text and "<AgentMemory>" in agent_only.text
    assert agent_only.parts["user"] is None
    assert memory_context_build(agent=other_agent, user=None, session=None).text == ""


def test_second_read_is_a_cache_hit_without_database_queries(
    agent, end_user, session, memories, django_assert_num_queries
):
    first = memory_context_get(agent=agent, user=end_user, session=session)

    with django_assert_num_queries(0):
        second = memory_context_get(agent=agent, user=end_user, session=session)

    assert second == first


def test_consolidation_new_reflection_and_edit_each_invalidate_the_cached_block(
    agent, end_user, session, memories, django_capture_on_commit_callbacks
):
    def block() -> str:
        return memory_context_get(agent=agent, user=end_user, session=session).text

    assert "Gene is a nurse in Lyon." in block()

    with django_capture_on_commit_callbacks(execute=True):
        consolidated_memory_replace(
            agent=agent,
            scope=MemoryScope.USER,
            user=end_user,
            session=None,
            content="Gene is a night nurse in Lyon.",
            reason="consolidated 1 reflection",
            absorbed=list(Reflection.objects.filter(scope=MemoryScope.USER, absorbed=False)),
        )
    assert "Gene is a night nurse in Lyon." in block() and "works &lt;nights&gt;" not in block()

    with django_capture_on_commit_callbacks(execute=True):
        reflection_create(
            agent=agent, scope=MemoryScope.SESSION, user=end_user, session=session, content="Prefers trains."
        )
    assert "- Prefers trains." in block()

    reflection = Reflection.objects.get(content="Users like bullet lists.")
    reflection.content = "Users like numbered lists."
    with django_capture_on_commit_callbacks(execute=True):
        reflection.save()
    assert "- Users like numbered lists." in block()


def test_an_operator_deleting_a_reflection_in_the_admin_invalidates_the_block(
    agent, end_user, session, memories, client, django_capture_on_commit_callbacks
):
    staff = get_user_model().objects.create_superuser("operator", "operator@example.com", "pw-123456789")
    client.force_login(staff)
    reflection = Reflection.objects.get(scope=MemoryScope.SESSION)
    assert "Planning a trip to Porto." in memory_context_get(agent=agent, user=end_user, session=session).text

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/admin/reflections/reflection/{reflection.pk}/delete/", {"post": "yes"})

    assert response.status_code == 302
    assert "Porto" not in memory_context_get(agent=agent, user=end_user, session=session).text


def test_an_operator_editing_a_blob_in_the_admin_invalidates_the_block(
    agent, end_user, session, memories, client, django_capture_on_commit_callbacks
):
    staff = get_user_model().objects.create_superuser("operator", "operator@example.com", "pw-123456789")
    client.force_login(staff)
    blob = ConsolidatedMemory.objects.get(scope=MemoryScope.USER)
    assert "Gene is a nurse in Lyon." in memory_context_get(agent=agent, user=end_user, session=session).text

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/admin/reflections/consolidatedmemory/{blob.pk}/change/",
            {"content": "Gene is a midwife in Lyon.", "reason": "corrected", "expected_version": blob.version},
        )

    assert response.status_code == 302
    assert "Gene is a midwife in Lyon." in memory_context_get(agent=agent, user=end_user, session=session).text


def test_agent_level_change_invalidates_every_users_block(
    agent, end_user, session, memories, django_capture_on_commit_callbacks
):
    other_user = EndUserFactory(agent=agent)
    assert "Answer briefly." in memory_context_get(agent=agent, user=other_user, session=None).text

    with django_capture_on_commit_callbacks(execute=True):
        consolidated_memory_replace(
            agent=agent,
            scope=MemoryScope.AGENT,
            user=None,
            session=None,
            content="Answer in two sentences.",
            reason="operator edit",
        )

    assert "Answer in two sentences." in memory_context_get(agent=agent, user=other_user, session=None).text
    assert "Answer in two sentences." in memory_context_get(agent=agent, user=end_user, session=session).text


def test_beat_refresh_recaches_active_sessions_and_repairs_a_write_that_bypassed_signals(
    agent, end_user, session, memories
):
    closed = SessionFactory(user=end_user, external_id="closed")
    Session.objects.filter(pk=closed.pk).update(closed_at=session.last_activity_at)
    memory_context_get(agent=agent, user=end_user, session=session)
    Reflection.objects.filter(scope=MemoryScope.SESSION).update(content="Planning a trip to Faro.")  # no signals
    assert "Porto" in memory_context_get(agent=agent, user=end_user, session=session).text

    assert memory_context_refresh_active() == 1
    assert memory_context_refresh_active() == 1

    assert "Faro" in memory_context_get(agent=agent, user=end_user, session=session).text
    entry = celery_app.conf.beat_schedule["memory-context-refresh"]
    assert entry["task"] == memory_context_refresh_active.name and entry["schedule"] == 300.0


@pytest.mark.django_db(transaction=True)
def test_context_endpoint_serves_etag_and_304_until_memory_changes(live_server):
    agent = AgentFactory(external_id="agent-etag")
    user = EndUserFactory(agent=agent, external_id="gene")
    SessionFactory(user=user, external_id="s-1")
    reflection_create(agent=agent, scope=MemoryScope.USER, user=user, content="Gene prefers French.")
    client = memory_client_for(agent=agent, base_url=live_server.url)

    first = client.context(user="gene", session="s-1")
    assert first is not None and "Gene prefers French." in first["text"]
    assert first["parts"]["session"] == {"blob": "", "blob_version": None, "recent_reflections": []}
    assert client.context(user="gene", session="s-1", if_none_match=first["etag"]) is None

    reflection_create(agent=agent, scope=MemoryScope.USER, user=user, content="Gene lives in Lyon.")
    changed = client.context(user="gene", session="s-1", if_none_match=first["etag"])

    assert changed is not None and changed["etag"] != first["etag"] and "Gene lives in Lyon." in changed["text"]


def test_context_endpoint_cache_hit_reads_no_memory_tables(agent, end_user, memories, client):
    _, raw_key = api_key_create(agent=agent)

    def get():
        with CaptureQueriesContext(connection) as queries:
            response = client.get("/api/v1/memory/context?user=user-1", HTTP_AUTHORIZATION=f"Bearer {raw_key}")
        assert response.status_code == 200
        return [query["sql"] for query in queries.captured_queries if "reflections_" in query["sql"]]

    assert get()
    assert get() == []


@pytest.mark.django_db(transaction=True)
def test_context_endpoint_errors_name_the_field_and_respect_the_agent_switch(live_server):
    agent = AgentFactory(external_id="agent-errors")
    gene = EndUserFactory(agent=agent, external_id="gene")
    EndUserFactory(agent=agent, external_id="ana")
    SessionFactory(user=gene, external_id="s-gene")
    client = memory_client_for(agent=agent, base_url=live_server.url)

    with pytest.raises(MemoryAPIError) as wrong_user:
        client.context(user="ana", session="s-gene")
    # Saved as the admin saves it: a save invalidates the per-process caches the request above filled.
    agent.always_in_context_enabled = False
    agent.save()
    with pytest.raises(MemoryAPIError) as disabled:
        client.context(user="gene")

    assert wrong_user.value.status == 400 and "session" in wrong_user.value.fields
    assert disabled.value.status == 403 and disabled.value.code == "memory_context_disabled"


@pytest.mark.django_db
def test_the_block_shows_the_profile_by_category_after_the_keyed_lines_capped(
    agent, end_user, settings, django_capture_on_commit_callbacks
):
    settings.MEMORY_CONTEXT_PROFILE_PER_CATEGORY = 2
    settings.MEMORY_CONTEXT_PROFILE_ENTRIES = 3
    with django_capture_on_commit_callbacks(execute=True):
        fact_profile_set(agent=agent, user=end_user, key="home_city", content="Gene lives in Lyon.", value="Lyon")
        for value in ("pottery", "climbing", "chess"):
            fact_filed(agent, end_user, f"Gene does {value}", "activities", value)
        fact_filed(agent, end_user, "Gene loves jazz", "likes", "jazz")
        fact_filed(agent, end_user, "Gene has a cat named Miso", "possessions", "a cat named Miso")

    text = memory_context_get(agent=agent, user=end_user, session=None).text

    lines = text.splitlines()
    start = lines.index("Profile:")
    assert lines[start + 1 : start + 4] == [
        "- home_city: Lyon",
        "- Activities and hobbies: chess; climbing",
        "- Likes and preferences: jazz",
    ], "the keyed lines as before, then each category's newest values, three in all"
    assert "Miso" not in text and "pottery" not in text
