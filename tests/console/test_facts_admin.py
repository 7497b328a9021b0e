"""Facts in the admin: edits are new versions, deletes close, erase destroys, bulk actions call the services."""

from __future__ import annotations

import json
import re
from datetime import date

import numpy as np
import pytest
from django.urls import reverse

from core.embeddings.spaces import embedding_provider_for_space, embedding_space_active
from facts.models import Fact, FactEmbedding
from facts.services.facts import fact_create
from facts.world_time import WorldTime
from tests.formation_support import wait_until

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:facts_fact_changelist")


def _change_url(fact: Fact) -> str:
    return reverse("admin:facts_fact_change", args=[fact.pk])


def _edit(admin_client, fact: Fact, **overrides):
    data = {"user": fact.user_id or "", "scopes": fact.scopes, "content": fact.content, "tags": ", ".join(fact.tags)}
    data |= {"reason": "the user said so"} | overrides
    return admin_client.post(_change_url(fact), data)


def test_an_edit_writes_a_new_embedded_version_and_the_history_shows_both(admin_client, paris_fact):
    response = _edit(admin_client, paris_fact, content="Gene lives in Lyon.", tags="home, moved")

    successor = Fact.objects.get(lineage=paris_fact.lineage, valid_to__isnull=True)
    paris_fact.refresh_from_db()
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:facts_fact_history", args=[successor.pk])
    assert (successor.version, successor.content, successor.tags) == (2, "Gene lives in Lyon.", ["home", "moved"])
    assert paris_fact.valid_to is not None and paris_fact.superseded_by_id == successor.pk
    assert paris_fact.closed_reason.startswith("the user said so")
    space = embedding_space_active()
    vector = FactEmbedding.objects.get(fact=successor, space=space).embedding
    expected = embedding_provider_for_space(space=space).embed_one("Gene lives in Lyon.")
    assert np.allclose(vector, expected, atol=1e-5)

    history = admin_client.get(response["Location"]).content.decode()
    assert "Gene lives in Lyon." in history and "Gene lives in Paris." in history
    assert "the user said so" in history
    assert reverse("admin:conversations_message_change", args=[paris_fact.source_messages.get().pk]) in history


def test_saving_without_a_change_writes_no_version(admin_client, paris_fact):
    _edit(admin_client, paris_fact)

    assert Fact.objects.filter(lineage=paris_fact.lineage).count() == 1


def test_an_edit_into_a_duplicate_of_another_current_fact_is_refused(admin_client, paris_fact, agent, end_user):
    other = fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene is a nurse.")

    response = _edit(admin_client, other, content="gene lives in paris")

    assert response.status_code == 200
    assert f"Fact #{paris_fact.pk} already says this" in response.content.decode()
    assert Fact.objects.filter(lineage=other.lineage).count() == 1


def test_moving_a_fact_to_agent_scope_drops_its_user(admin_client, paris_fact):
    _edit(admin_client, paris_fact, scopes=["agent"])

    successor = Fact.objects.get(lineage=paris_fact.lineage, valid_to__isnull=True)
    assert successor.scopes == ["agent"] and successor.user_id is None


def test_a_closed_version_is_read_only(admin_client, paris_fact):
    _edit(admin_client, paris_fact, content="Gene lives in Lyon.")

    page = admin_client.get(_change_url(paris_fact)).content.decode()
    response = _edit(admin_client, paris_fact, content="Gene lives in Rome.")

    assert 'name="_save"' not in page
    assert response.status_code == 403


def test_delete_closes_the_fact_and_keeps_it(admin_client, paris_fact):
    confirmation = admin_client.get(reverse("admin:facts_fact_delete", args=[paris_fact.pk])).content.decode()
    response = admin_client.post(reverse("admin:facts_fact_delete", args=[paris_fact.pk]), {"post": "yes"})

    paris_fact.refresh_from_db()
    assert "Closing is not erasing" in confirmation
    assert response.status_code == 302
    assert paris_fact.valid_to is not None and paris_fact.superseded_by_id is None
    assert "deleted by an operator" in paris_fact.closed_reason
    assert "delete_selected" not in admin_client.get(CHANGELIST).content.decode()


def test_erase_asks_first_then_deletes_every_version(admin_client, paris_fact):
    _edit(admin_client, paris_fact, content="Gene lives in Lyon.")
    action = {"action": "erase_selected", "_selected_action": [paris_fact.pk]}

    confirmation = admin_client.post(CHANGELIST, action)
    assert confirmation.status_code == 200
    assert Fact.objects.filter(lineage=paris_fact.lineage).count() == 2
    assert "Gene lives in Lyon." in confirmation.content.decode()

    admin_client.post(CHANGELIST, action | {"confirm": "yes"})
    assert not Fact.objects.filter(lineage=paris_fact.lineage).exists()
    assert not FactEmbedding.objects.exists()


def test_close_and_change_scope_actions(admin_client, paris_fact, agent):
    agent_fact = fact_create(agent=agent, user=None, scopes=["agent"], content="The office opens at nine.")

    page = admin_client.post(
        CHANGELIST, {"action": "change_scope_of_selected", "_selected_action": [paris_fact.pk, agent_fact.pk]}
    )
    assert page.status_code == 200 and "Change scope" in page.content.decode()
    admin_client.post(
        CHANGELIST,
        {
            "action": "change_scope_of_selected",
            "_selected_action": [paris_fact.pk, agent_fact.pk],
            "apply": "yes",
            "scopes": ["user", "agent"],
        },
    )
    widened = Fact.objects.get(lineage=paris_fact.lineage, valid_to__isnull=True)
    assert sorted(widened.scopes) == ["agent", "user"] and widened.version == 2
    assert Fact.objects.filter(lineage=agent_fact.lineage).count() == 1  # no user to scope it to: skipped

    admin_client.post(CHANGELIST, {"action": "close_selected", "_selected_action": [widened.pk, agent_fact.pk]})
    assert not Fact.objects.filter(valid_to__isnull=True).exists()


def test_export_selected_facts_as_json_lines(admin_client, paris_fact):
    response = admin_client.post(CHANGELIST, {"action": "export_selected", "_selected_action": [paris_fact.pk]})

    records = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert response["Content-Type"] == "application/x-ndjson"
    assert records[0]["content"] == "Gene lives in Paris." and records[0]["user"] == "user-1"
    assert records[0]["source_message_ids"] == [paris_fact.source_messages.get().pk]


@pytest.mark.django_db(transaction=True)
def test_reembed_action_replaces_the_vector_on_the_worker(admin_client, paris_fact, celery_worker_process):
    space = embedding_space_active()
    FactEmbedding.objects.filter(fact=paris_fact).update(embedding=np.ones(space.dimensions) / space.dimensions**0.5)
    expected = embedding_provider_for_space(space=space).embed_one(paris_fact.content)

    admin_client.post(CHANGELIST, {"action": "reembed_selected", "_selected_action": [paris_fact.pk]})

    wait_until(
        lambda: np.allclose(FactEmbedding.objects.get(fact=paris_fact, space=space).embedding, expected, atol=1e-5),
        timeout=60,
        what="the fact re-embedded by the worker",
        process=celery_worker_process,
    )


def test_semantic_search_shows_what_the_agent_would_retrieve_with_ranks(admin_client, paris_fact, agent, end_user):
    fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene owns a grey cat named Miso.")
    fact_create(agent=agent, user=None, scopes=["agent"], content="Support is open on weekdays.")
    other_user = end_user.__class__.objects.create(agent=agent, external_id="user-2")
    fact_create(agent=agent, user=other_user, scopes=["user"], content="Alex lives in Berlin.")

    response = admin_client.get(
        reverse("admin:facts_fact_search"),
        {"agent": agent.pk, "user": "user-1", "query": "Which city is Gene's home?", "mode": "hybrid", "top_k": 10},
    )

    page = response.content.decode()
    assert page.index("Gene lives in Paris.") < page.index("Gene owns a grey cat")
    assert "Alex lives in Berlin." not in page  # another user's fact is never retrievable here
    assert "vector rank" in page and "text rank" in page


def test_the_list_search_is_full_text_and_the_filters_narrow(admin_client, paris_fact, agent):
    fact_create(agent=agent, user=None, scopes=["agent"], content="Support is open on weekdays.")

    def listed(**params) -> str:
        return admin_client.get(CHANGELIST, params).content.decode()

    assert "Gene lives in Paris." in listed(q="paris") and "Support is open" not in listed(q="paris")
    assert "Gene lives in Paris." in listed(user="user-1", tag="home", status="current", source_session="session-1")
    assert "Gene lives in Paris." not in listed(tag="work")
    assert "Gene lives in Paris." not in listed(scope="agent") and "Support is open" in listed(scope="agent")
    assert "Gene lives in Paris." not in listed(status="superseded")


def test_adding_a_fact_goes_through_fact_create_and_embeds_it(admin_client, agent, end_user, scripted_llm):
    response = admin_client.post(
        reverse("admin:facts_fact_add"),
        {
            "agent": agent.pk,
            "user": end_user.pk,
            "scopes": ["user"],
            "content": "Gene  is vegetarian.",
            "tags": "diet",
            "reason": "told support by phone",
        },
    )

    fact = Fact.objects.get()
    assert response.status_code == 302
    assert (fact.content, fact.tags, fact.version) == ("Gene is vegetarian.", ["diet"], 1)
    assert fact.change_reason.startswith("told support by phone")
    assert fact.embeddings.count() == 1
    assert scripted_llm.requests == []  # no LLM call in an admin request


def test_pin_and_unpin_actions_change_only_current_facts_and_write_no_version(admin_client, paris_fact):
    _edit(admin_client, paris_fact, content="Gene lives in Lyon.")
    current = Fact.objects.get(lineage=paris_fact.lineage, valid_to__isnull=True)

    admin_client.post(CHANGELIST, {"action": "pin_selected", "_selected_action": [paris_fact.pk, current.pk]})
    assert list(Fact.objects.filter(pinned=True).values_list("pk", flat=True)) == [current.pk]
    assert Fact.objects.filter(lineage=paris_fact.lineage).count() == 2
    assert "Gene lives in Lyon." in admin_client.get(CHANGELIST, {"pinned__exact": 1}).content.decode()

    admin_client.post(CHANGELIST, {"action": "unpin_selected", "_selected_action": [current.pk]})
    assert not Fact.objects.filter(pinned=True).exists()


def test_the_fact_page_shows_both_clocks_and_an_end_given_is_a_change_in_the_world(admin_client, paris_fact):
    page = admin_client.get(_change_url(paris_fact)).content.decode()
    assert "In the world" in page and "Recorded" in page and "1 version (history)" in page

    response = _edit(admin_client, paris_fact, world_start="2021-04", world_end="2024")

    successor = Fact.objects.get(lineage=paris_fact.lineage, valid_to__isnull=True)
    assert response.status_code == 302 and successor.version == 2 and successor.content == paris_fact.content
    assert (successor.held_from, successor.held_from_precision) == (date(2021, 4, 1), "month")
    assert (successor.held_until, successor.held_until_precision) == (date(2024, 1, 1), "year")
    page = admin_client.get(_change_url(successor)).content.decode()
    assert 'value="2021-04"' in page and 'value="2024"' in page and "2 versions (history)" in page
    closed = admin_client.get(_change_url(paris_fact)).content.decode()
    assert "not known" in closed  # the version before said no time, shown read-only
    _edit(admin_client, successor, world_start="2021-04", world_end="2024")  # the same again: no version
    assert Fact.objects.filter(lineage=paris_fact.lineage).count() == 2


@pytest.mark.parametrize(
    ("world_start", "world_end", "field"),
    [("2021-13", "", "world_start"), ("2022", "2021", "world_end"), ("", "yesterday", "world_end")],
)
def test_a_world_time_that_cannot_be_is_refused_on_its_field(admin_client, paris_fact, world_start, world_end, field):
    response = _edit(admin_client, paris_fact, world_start=world_start, world_end=world_end)

    assert response.status_code == 200 and field in response.context["adminform"].form.errors
    assert Fact.objects.filter(lineage=paris_fact.lineage).count() == 1


def test_the_list_filters_by_whether_a_statement_holds_now(admin_client, agent, end_user, paris_fact):
    ended = fact_create(
        agent=agent,
        user=end_user,
        scopes=["user"],
        content="Gene lived in Denver.",
        world_time=WorldTime(start=date(2019, 1, 1), start_precision="year", end_precision="unknown"),
    )
    holds = fact_create(
        agent=agent,
        user=end_user,
        scopes=["user"],
        content="Gene lives in Boulder.",
        world_time=WorldTime(start=date(2023, 5, 1), start_precision="month"),
    )

    def listed(world: str) -> set[int]:
        html = admin_client.get(CHANGELIST, {"world": world}).content.decode()
        return {int(pk) for pk in re.findall(r'name="_selected_action" value="(\d+)"', html)}

    assert listed("holds_now") == {holds.pk, paris_fact.pk}
    assert listed("ended") == {ended.pk}
    assert listed("unknown") == {paris_fact.pk}
    assert "2023-05 →" in admin_client.get(CHANGELIST).content.decode()
