"""Profile facts by key: a new value for the same user and key takes the key; the old one ends in the world."""

from datetime import date

import pytest
from django.utils import timezone

from conversations.services.ingestion import MessageInput, session_append_messages
from core.exceptions import ApplicationError
from facts.models import Fact
from facts.selectors.profile import user_profile
from facts.services.facts import fact_create, fact_profile_set
from formation.services.formation import session_form_memories
from reflections.selectors.context import memory_context_get
from tests.fakes import facts_reply


@pytest.mark.django_db
def test_a_new_value_ends_the_old_one_in_the_world_and_keeps_history(agent, end_user):
    """A new value is a change in the world, not a correction: the old statement stays current memory, ended where
    the new one began (a new version of its lineage, without the key), and the new value holds the key."""
    first, outcome = fact_profile_set(
        agent=agent, user=end_user, key="home_city", content="The user lives in Lisbon.", value="Lisbon"
    )
    assert outcome == "created"
    assert fact_profile_set(
        agent=agent, user=end_user, key="home_city", content="The user lives in Lisbon.", value="Lisbon"
    ) == (first, "unchanged")

    second, outcome = fact_profile_set(
        agent=agent, user=end_user, key="home_city", content="The user lives in Porto.", value="Porto"
    )

    first.refresh_from_db()
    ended = first.superseded_by
    assert outcome == "updated"
    assert first.valid_to is not None and first.closed_reason == "new value"
    assert (ended.content, ended.lineage, ended.version, ended.key, ended.is_current) == (
        "The user lives in Lisbon.",
        first.lineage,
        2,
        "",
        True,
    )
    assert ended.world_time.ended and not ended.world_time.holds_on(timezone.now().date())
    assert (second.key, second.change_reason, second.is_current) == ("home_city", "new value", True)
    assert second.lineage != first.lineage and second.world_time.holds_on(timezone.now().date())
    assert user_profile(agent=agent, user=end_user)["home_city"].value == "Porto"
    assert Fact.objects.filter(lineage=first.lineage).count() == 2


@pytest.mark.django_db
def test_a_known_statement_becomes_the_keyed_value_instead_of_a_duplicate(agent, end_user):
    known = fact_create(agent=agent, user=end_user, scopes=["user"], content="The user works at Acme.")

    fact, outcome = fact_profile_set(agent=agent, user=end_user, key="employer", content="The user works at Acme.")

    assert (fact.pk, outcome, fact.key) == (known.pk, "updated", "employer")
    assert Fact.objects.filter(valid_to__isnull=True).count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize("key", ["Home City", "home-city", "1st", "x" * 101])
def test_invalid_keys_are_refused_naming_the_field(agent, end_user, key):
    with pytest.raises(ApplicationError) as error:
        fact_profile_set(agent=agent, user=end_user, key=key, content="The user lives somewhere nice.")
    assert "key" in error.value.fields
    assert not Fact.objects.exists()


@pytest.mark.django_db
def test_formation_ends_a_keyed_value_in_the_world_without_a_reconciliation_call(agent, scripted_llm):
    session = session_append_messages(
        agent=agent,
        user_external_id="u",
        session_external_id="s",
        messages=[MessageInput(role="user", content="I now work as a pilot.")],
    ).session
    fact_profile_set(agent=agent, user=session.user, key="job_title", content="The user works as a nurse.")
    reply = facts_reply("The user works as a pilot.")
    reply["facts"][0]["key"] = "job_title"
    scripted_llm.script("extract_facts", reply)

    job = session_form_memories(session_id=session.pk, trigger="explicit").job

    assert scripted_llm.calls("reconcile_facts") == []
    assert job.facts_updated == 1
    profile = user_profile(agent=agent, user=session.user)
    assert profile["job_title"].value == "The user works as a pilot." and profile["job_title"].version == 1
    # A new job is a change in the world: the old one stays current memory, ended (a new version of its own).
    nurse = Fact.objects.get(content="The user works as a nurse.", valid_to__isnull=True)
    assert (nurse.version, nurse.key, nurse.change_reason) == (2, "", "new value")
    assert nurse.world_time.ended and not nurse.world_time.holds_on(date.today())


@pytest.mark.django_db
def test_offline_provider_keeps_the_profile_current(agent):
    for number, text in enumerate(["My name is Ana Silva and I live in Lisbon.", "I moved to Porto last week."]):
        session = session_append_messages(
            agent=agent,
            user_external_id="u",
            session_external_id=f"s{number}",
            messages=[MessageInput(role="user", content=text)],
        ).session
        session_form_memories(session_id=session.pk, trigger="explicit")

    profile = user_profile(agent=agent, user=session.user)
    assert profile["name"].value == "The user's name is Ana Silva."
    assert profile["home_city"].value == "The user lives in Porto."


@pytest.mark.django_db
def test_the_context_block_shows_the_profile_and_follows_its_changes(
    agent, end_user, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        fact_profile_set(
            agent=agent, user=end_user, key="home_city", content="The user lives in Lisbon.", value="Lisbon"
        )
    assert "- home_city: Lisbon" in memory_context_get(agent=agent, user=end_user, session=None).text

    with django_capture_on_commit_callbacks(execute=True):
        fact_profile_set(agent=agent, user=end_user, key="home_city", content="The user lives in Porto.", value="Porto")
    text = memory_context_get(agent=agent, user=end_user, session=None).text
    assert "- home_city: Porto" in text and "Lisbon" not in text

    with django_capture_on_commit_callbacks(execute=True):
        agent.profile_in_context = False
        agent.save()
    assert "home_city" not in memory_context_get(agent=agent, user=end_user, session=None).text


@pytest.mark.django_db
def test_api_and_save_memory_tool_accept_a_key(agent):
    from django.test import Client

    from agents.services.api_keys import api_key_create

    _, raw_key = api_key_create(agent=agent)
    api = Client(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    created = api.post(
        "/api/v1/facts",
        {"content": "The user speaks Portuguese.", "user": "ana", "key": "preferred_language"},
        content_type="application/json",
    )
    assert created.status_code == 201 and created.json()["key"] == "preferred_language"
    bad = api.post(
        "/api/v1/facts",
        {"content": "The user speaks Portuguese.", "user": "ana", "key": "Bad Key"},
        content_type="application/json",
    )
    assert bad.status_code == 400 and "key" in bad.json()["error"]["fields"]

    call = api.post(
        "/api/v1/tools/call",
        {
            "name": "save_memory",
            "user": "ana",
            "arguments": {"content": "The user prefers English now.", "key": "preferred_language"},
        },
        content_type="application/json",
    )

    assert call.status_code == 200 and call.json()["ok"] is True, call.json()
    profile = user_profile(agent=agent, user=Fact.objects.get(key="preferred_language", valid_to__isnull=True).user)
    assert profile["preferred_language"].value == "The user prefers English now."
    earlier = Fact.objects.get(content=created.json()["content"], valid_to__isnull=True)
    assert earlier.key == "" and earlier.world_time.ended  # a new value: the earlier one ended in the world
