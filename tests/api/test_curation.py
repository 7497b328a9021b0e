"""Reflections and blobs through the API: list, add a reflection by hand, list and edit blobs (a new version)."""

import pytest
from django.test import Client

from agents.models import EndUser
from conversations.models import Session
from reflections.models import ConsolidatedMemory, ConsolidatedMemoryVersion, Reflection
from reflections.selectors.context import memory_context_get
from reflections.services.consolidation import consolidated_memory_replace
from reflections.services.reflections import reflection_create
from tests.factories import AgentFactory, EndUserFactory


def _post(api: Client, path: str, body: dict):
    return api.post(path, body, content_type="application/json")


def _patch(api: Client, path: str, body: dict):
    return api.patch(path, body, content_type="application/json")


@pytest.mark.django_db
def test_add_reflections_by_hand_in_each_scope(api, agent, session):
    agent_level = _post(api, "/api/v1/reflections", {"scope": "agent", "content": "Users like short answers."})
    user_level = _post(api, "/api/v1/reflections", {"scope": "user", "user": "new-user", "content": "Likes jazz."})
    session_level = _post(
        api, "/api/v1/reflections", {"scope": "session", "session": "session-1", "content": "Planning a trip."}
    )

    assert [r.status_code for r in (agent_level, user_level, session_level)] == [201, 201, 201]
    assert all(r.json()["source"] == "manual" and r.json()["absorbed"] is False for r in (agent_level, user_level))
    assert user_level.json()["user"] == "new-user" and EndUser.objects.filter(external_id="new-user").exists()
    assert session_level.json()["session"] == "session-1" and session_level.json()["user"] == "user-1"


@pytest.mark.django_db
def test_a_new_reflection_invalidates_the_cached_context_block(
    api, agent, end_user, session, django_capture_on_commit_callbacks
):
    before = memory_context_get(agent=agent, user=end_user, session=session)

    with django_capture_on_commit_callbacks(execute=True):
        _post(api, "/api/v1/reflections", {"scope": "user", "user": "user-1", "content": "Prefers Spanish."})

    after = memory_context_get(agent=agent, user=end_user, session=session)
    assert "Prefers Spanish." not in before.text and "Prefers Spanish." in after.text


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"content": "x"}, "scope"),
        ({"scope": "team", "content": "x"}, "scope"),
        ({"scope": "agent"}, "content"),
        ({"scope": "user", "user": "newcomer", "content": " ".join(["word"] * 36)}, "content"),
        ({"scope": "user", "content": "x"}, "user"),
        ({"scope": "session", "session": "no-such-session", "content": "x"}, "session"),
    ],
)
def test_bad_reflections_are_refused_naming_the_field(api, body, field):
    response = _post(api, "/api/v1/reflections", body)

    assert response.status_code == 400, response.json()
    assert field in response.json()["error"]["fields"], response.json()
    assert not Reflection.objects.exists()
    assert not EndUser.objects.filter(external_id="newcomer").exists()


@pytest.mark.django_db
def test_list_reflections_filters_by_scope_user_session_and_absorbed(api, agent, end_user, session):
    other = EndUserFactory(agent=agent)
    reflection_create(agent=agent, scope="agent", content="Agent note")
    mine = reflection_create(agent=agent, scope="user", user=end_user, content="User note")
    reflection_create(agent=agent, scope="session", user=end_user, session=session, content="Session note")
    reflection_create(agent=agent, scope="user", user=other, content="Other user note")
    Reflection.objects.filter(pk=mine.pk).update(absorbed=True)
    reflection_create(agent=AgentFactory(), scope="agent", content="Not ours")

    def contents(query: str) -> list[str]:
        response = api.get(f"/api/v1/reflections{query}")
        assert response.status_code == 200, response.json()
        return [r["content"] for r in response.json()["results"]]

    assert len(contents("")) == 4
    assert contents("?scope=agent") == ["Agent note"]
    assert contents("?user=user-1") == ["Session note", "User note"]
    assert contents("?session=session-1") == ["Session note"]
    assert contents("?user=user-1&absorbed=false") == ["Session note"]
    assert contents("?absorbed=true") == ["User note"]
    assert contents("?user=never-seen") == []
    assert api.get("/api/v1/reflections?absorbed=perhaps").json()["error"]["fields"].keys() == {"absorbed"}


@pytest.mark.django_db
def test_edit_a_blob_keeps_the_old_text_as_a_version_and_invalidates_the_block(
    api, agent, end_user, session, django_capture_on_commit_callbacks
):
    blob = consolidated_memory_replace(
        agent=agent, scope="user", user=end_user, session=None, content="Gene lives in Porto.", reason="consolidated"
    )
    before = memory_context_get(agent=agent, user=end_user, session=session)

    with django_capture_on_commit_callbacks(execute=True):
        response = _patch(
            api,
            f"/api/v1/blobs/{blob.pk}",
            {"content": "Gene lives in Lisbon.", "reason": "moved", "expected_version": 1},
        )

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["version"] == 2 and body["content"] == "Gene lives in Lisbon." and body["change_reason"] == "moved"
    assert body["past_versions"][0]["version"] == 1 and body["past_versions"][0]["content"] == "Gene lives in Porto."
    after = memory_context_get(agent=agent, user=end_user, session=session)
    assert "Porto" in before.text and "Lisbon" in after.text and "Porto" not in after.text


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field", "status"),
    [
        ({}, "content", 400),
        ({"content": " ".join(["word"] * 401)}, "content", 400),
        ({"content": "x", "expected_version": 7}, "expected_version", 409),
        ({"content": "x", "expected_version": "one"}, "expected_version", 400),
    ],
)
def test_bad_blob_edits_change_nothing(api, agent, end_user, body, field, status):
    blob = consolidated_memory_replace(
        agent=agent, scope="user", user=end_user, session=None, content="Gene lives in Porto.", reason="consolidated"
    )

    response = _patch(api, f"/api/v1/blobs/{blob.pk}", body)

    assert response.status_code == status, response.json()
    assert field in response.json()["error"]["fields"]
    blob.refresh_from_db()
    assert blob.version == 1 and blob.content == "Gene lives in Porto."
    assert not ConsolidatedMemoryVersion.objects.exists()


@pytest.mark.django_db
def test_list_and_read_blobs_only_of_this_agent(api, agent, end_user, session):
    consolidated_memory_replace(agent=agent, scope="agent", user=None, session=None, content="A", reason="c")
    consolidated_memory_replace(agent=agent, scope="user", user=end_user, session=None, content="U", reason="c")
    consolidated_memory_replace(agent=agent, scope="session", user=end_user, session=session, content="S", reason="c")
    other_agent = AgentFactory()
    theirs = consolidated_memory_replace(
        agent=other_agent, scope="agent", user=None, session=None, content="Not ours", reason="c"
    )

    everything = api.get("/api/v1/blobs").json()["results"]
    users = api.get("/api/v1/blobs?scope=user&user=user-1").json()["results"]
    sessions = api.get("/api/v1/blobs?session=session-1").json()["results"]

    assert sorted(blob["content"] for blob in everything) == ["A", "S", "U"]
    assert [blob["content"] for blob in users] == ["U"]
    assert [blob["content"] for blob in sessions] == ["S"]
    assert api.get(f"/api/v1/blobs/{theirs.pk}").status_code == 404
    assert _patch(api, f"/api/v1/blobs/{theirs.pk}", {"content": "mine now"}).status_code == 404
    assert ConsolidatedMemory.objects.get(pk=theirs.pk).content == "Not ours"
    assert Session.objects.count() == 1
