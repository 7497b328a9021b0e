"""The facts API: list, create (deduplicated), read, update (a new version), delete (close or erase), history."""

import pytest
from django.utils import timezone
from rest_framework import serializers

from agents.models import EndUser
from api.facts.serializers import FactOutputSerializer
from core.models import SensitiveDataFinding
from facts.models import Fact, FactEmbedding
from facts.services.facts import fact_close, fact_create, fact_profile_set, fact_supersede
from tests.factories import AgentFactory, MessageFactory


def _snapshot() -> list[tuple]:
    return list(Fact.objects.order_by("pk").values_list("pk", "content", "valid_to", "version", "tags"))


@pytest.mark.django_db
def test_create_embeds_the_fact_and_a_duplicate_returns_the_existing_one(api, agent):
    body = {"user": "gene", "content": "Gene's birthday is March 15th", "tags": ["personal"]}

    created = api.post("/api/v1/facts", body, content_type="application/json")
    again = api.post(
        "/api/v1/facts", body | {"content": "  gene's BIRTHDAY is march 15th. "}, content_type="application/json"
    )

    assert created.status_code == 201, created.json()
    fact = created.json()
    assert fact["scopes"] == ["user"] and fact["user"] == "gene" and fact["is_current"] and fact["version"] == 1
    assert FactEmbedding.objects.filter(fact_id=fact["id"]).count() == 1
    assert again.status_code == 200 and again.json()["id"] == fact["id"]
    assert Fact.objects.count() == 1
    assert EndUser.objects.filter(agent=agent, external_id="gene").exists()


@pytest.mark.django_db
def test_create_without_a_user_is_agent_wide(api):
    response = api.post("/api/v1/facts", {"content": "Support opens at 9am"}, content_type="application/json")

    assert response.status_code == 201
    assert response.json()["scopes"] == ["agent"] and response.json()["user"] is None


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "content"),
        ({"content": "   "}, "content"),
        ({"content": " ".join(["word"] * 31), "user": "newcomer"}, "content"),
        ({"content": "ok", "scopes": ["session"]}, "scopes.0"),
        ({"content": "ok", "scopes": []}, "scopes"),
        ({"content": "ok", "scopes": ["user"]}, "user"),
        ({"content": "ok", "tags": "not-a-list"}, "tags"),
        ({"content": "ok", "metadata": [1]}, "metadata"),
    ],
)
def test_create_with_bad_input_names_the_field_and_stores_nothing(api, body, field):
    response = api.post("/api/v1/facts", body, content_type="application/json")

    assert response.status_code == 400, response.json()
    assert field in response.json()["error"]["fields"], response.json()
    assert Fact.objects.count() == 0
    assert not EndUser.objects.filter(external_id="newcomer").exists()


@pytest.mark.django_db
def test_list_filters_and_follows_cursor_pages_without_caps(api, agent, end_user):
    for i in range(7):
        fact_create(agent=agent, user=end_user, scopes=["user"], content=f"Fact number {i}", tags=["t"] if i else [])
    fact_create(agent=agent, user=None, scopes=["agent"], content="An agent fact")
    closed = fact_create(agent=agent, user=end_user, scopes=["user"], content="An old fact")
    fact_close(fact=closed, reason="outdated")
    fact_create(agent=AgentFactory(), user=None, scopes=["agent"], content="Not ours")

    ids, url = [], "/api/v1/facts?user=user-1&page_size=3"
    while url:
        page = api.get(url).json()
        ids += [fact["id"] for fact in page["results"]]
        url = page["next"]

    assert len(ids) == 7 and ids == sorted(ids, reverse=True)
    assert len(api.get("/api/v1/facts?status=all&user=user-1").json()["results"]) == 8
    assert [f["content"] for f in api.get("/api/v1/facts?scope=agent").json()["results"]] == ["An agent fact"]
    assert len(api.get("/api/v1/facts?tag=t").json()["results"]) == 6
    assert api.get("/api/v1/facts?user=never-seen").json()["results"] == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "field"), [("page_size=501", "page_size"), ("page_size=0", "page_size"), ("status=gone", "status")]
)
def test_list_refuses_bad_filters(api, query, field):
    response = api.get(f"/api/v1/facts?{query}")

    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]


@pytest.mark.django_db
def test_read_a_fact_and_another_agents_fact_is_not_found(api, agent):
    ours = fact_create(agent=agent, user=None, scopes=["agent"], content="Ours")
    theirs = fact_create(agent=AgentFactory(), user=None, scopes=["agent"], content="No")

    assert api.get(f"/api/v1/facts/{ours.pk}").json()["content"] == "Ours"
    for method in ("get", "delete"):
        response = getattr(api, method)(f"/api/v1/facts/{theirs.pk}")
        assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    assert api.patch(f"/api/v1/facts/{theirs.pk}", {"content": "x"}, content_type="application/json").status_code == 404
    assert api.get(f"/api/v1/facts/{theirs.pk}/history").status_code == 404
    assert Fact.objects.get(pk=theirs.pk).valid_to is None


@pytest.mark.django_db
def test_update_writes_a_new_reembedded_version_and_keeps_the_old(api, agent, end_user):
    fact = fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene lives in Porto", tags=["home"])

    response = api.patch(
        f"/api/v1/facts/{fact.pk}",
        {"content": "Gene lives in Lisbon", "reason": "moved"},
        content_type="application/json",
    )

    assert response.status_code == 200, response.json()
    new = response.json()
    assert new["id"] != fact.pk and new["version"] == 2 and new["lineage"] == str(fact.lineage)
    assert new["tags"] == ["home"] and new["change_reason"] == "moved"
    fact.refresh_from_db()
    assert fact.valid_to is not None and fact.superseded_by_id == new["id"] and fact.closed_reason == "moved"
    old_vector, new_vector = (FactEmbedding.objects.get(fact_id=pk).embedding for pk in (fact.pk, new["id"]))
    assert list(old_vector) != list(new_vector)


@pytest.mark.django_db
def test_update_of_a_closed_version_is_a_conflict_naming_the_current_one(api, agent):
    fact = fact_create(agent=agent, user=None, scopes=["agent"], content="Version one")
    current = fact_supersede(fact=fact, content="Version two", reason="edit")
    before = _snapshot()

    response = api.patch(f"/api/v1/facts/{fact.pk}", {"content": "Version three"}, content_type="application/json")

    assert response.status_code == 409
    assert str(current.pk) in response.json()["error"]["message"]
    assert _snapshot() == before


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field"),
    [({}, "non_field_errors"), ({"content": " ".join(["w"] * 40)}, "content"), ({"scopes": ["nope"]}, "scopes.0")],
)
def test_update_with_bad_input_changes_nothing(api, agent, body, field):
    fact = fact_create(agent=agent, user=None, scopes=["agent"], content="Stable fact")
    before = _snapshot()

    response = api.patch(f"/api/v1/facts/{fact.pk}", body, content_type="application/json")

    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]
    assert _snapshot() == before


@pytest.mark.django_db
def test_update_into_a_duplicate_is_a_conflict_and_changes_nothing(api, agent):
    fact_create(agent=agent, user=None, scopes=["agent"], content="The office is in Lisbon")
    other = fact_create(agent=agent, user=None, scopes=["agent"], content="The office is in Porto")
    before = _snapshot()

    response = api.patch(
        f"/api/v1/facts/{other.pk}", {"content": "The office is in Lisbon"}, content_type="application/json"
    )

    assert response.status_code == 409 and "content" in response.json()["error"]["fields"]
    assert _snapshot() == before


@pytest.mark.django_db
def test_delete_closes_the_fact_and_hard_delete_erases_its_lineage(api, agent):
    kept = fact_create(agent=agent, user=None, scopes=["agent"], content="Closed but kept")
    erased = fact_create(agent=agent, user=None, scopes=["agent"], content="Secret, first version")
    erased_current = fact_supersede(fact=erased, content="Secret, second version", reason="edit")

    assert api.delete(f"/api/v1/facts/{kept.pk}?reason=wrong").status_code == 204
    assert api.delete(f"/api/v1/facts/{kept.pk}").status_code == 409
    assert api.delete(f"/api/v1/facts/{erased.pk}?hard=true").status_code == 204

    kept.refresh_from_db()
    assert kept.valid_to is not None and kept.closed_reason == "wrong"
    assert not Fact.objects.filter(pk__in=[erased.pk, erased_current.pk]).exists()
    assert not FactEmbedding.objects.filter(fact_id__in=[erased.pk, erased_current.pk]).exists()


@pytest.mark.django_db
def test_delete_with_a_bad_hard_flag_changes_nothing(api, agent):
    fact = fact_create(agent=agent, user=None, scopes=["agent"], content="Still here")

    response = api.delete(f"/api/v1/facts/{fact.pk}?hard=maybe")

    assert response.status_code == 400 and "hard" in response.json()["error"]["fields"]
    assert Fact.objects.get(pk=fact.pk).valid_to is None


@pytest.mark.django_db
def test_history_lists_every_version_with_reasons_and_source_messages(api, agent, end_user, session):
    said = MessageFactory(session=session, content="I moved to Lisbon")
    first = fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene lives in Porto")
    second = fact_supersede(fact=first, content="Gene lives in Lisbon", reason="moved", source_messages=[said])
    fact_close(fact=second, reason="user asked to forget")

    response = api.get(f"/api/v1/facts/{second.pk}/history")

    assert response.status_code == 200
    versions = response.json()["versions"]
    assert [v["id"] for v in versions] == [first.pk, second.pk]
    assert versions[0]["closed_reason"] == "moved" and versions[0]["closed_by_message_ids"] == [said.pk]
    assert versions[1]["change_reason"] == "moved" and versions[1]["source_message_ids"] == [said.pk]
    assert versions[1]["closed_reason"] == "user asked to forget"
    assert all(v["valid_from"] and v["valid_to"] for v in versions)


@pytest.mark.django_db
def test_fact_output_reads_columns_directly_with_drfs_own_result(agent, end_user, session):
    """FactOutputSerializer's direct reading gives exactly what DRF's field machinery gives: every kind of fact
    (agent-wide, a user's, closed, superseded, from a session, keyed, pinned, accessed)."""
    agent_wide = fact_create(agent=agent, user=None, scopes=["agent"], content="The office opens at nine")
    own = fact_create(
        agent=agent, user=end_user, scopes=["user"], content="Gene likes tea", tags=["drinks"], source_session=session
    )
    successor = fact_supersede(fact=own, content="Gene likes green tea", reason="more precise")
    fact_close(fact=agent_wide, reason="moved")
    keyed, _ = fact_profile_set(agent=agent, user=end_user, key="home_city", content="Gene lives in Lyon", value="Lyon")
    Fact.objects.filter(pk=keyed.pk).update(pinned=True, access_count=3, last_accessed_at=timezone.now())
    facts = Fact.objects.select_related("user", "source_session").filter(agent=agent).order_by("pk")

    for fact in facts:
        direct = FactOutputSerializer(fact).data
        by_drf = serializers.ModelSerializer.to_representation(FactOutputSerializer(), fact)
        assert direct == by_drf, fact
    assert {fact.pk for fact in facts} >= {agent_wide.pk, own.pk, successor.pk, keyed.pk}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("content", "kind"),
    [
        ("La contraseña del banco de Gene es Girasol-2023", "password or PIN"),
        ("Gene's card security code is 737", "card security code"),
        ("The answer to Gene's security question is Buttercup", "security answer"),
    ],
)
def test_a_secret_in_a_posted_fact_is_refused_naming_the_field_and_never_the_value(api, agent, content, kind):
    before = _snapshot()

    response = api.post("/api/v1/facts", {"user": "gene", "content": content}, content_type="application/json")

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "sensitive_data" and kind in error["fields"]["content"][0]
    assert content.split()[-1] not in response.content.decode()
    assert _snapshot() == before and not EndUser.objects.filter(external_id="gene").exists()


@pytest.mark.django_db
def test_a_secret_in_a_changed_fact_is_refused_and_the_fact_is_unchanged(api, agent):
    fact = fact_create(agent=agent, user=None, scopes=["agent"], content="The office wifi is called Corvid")
    before = _snapshot()

    response = api.patch(
        f"/api/v1/facts/{fact.pk}",
        {"content": "The office wifi password is Corvid-4411"},
        content_type="application/json",
    )

    assert response.status_code == 400 and response.json()["error"]["fields"]["content"]
    assert "Corvid-4411" not in response.content.decode()
    assert _snapshot() == before


@pytest.mark.django_db
def test_under_redact_a_posted_fact_is_stored_with_the_value_replaced_and_counted(api, agent):
    agent.sensitive_data = "redact"
    agent.save()

    response = api.post(
        "/api/v1/facts", {"content": "The alarm code at the warehouse is 5520"}, content_type="application/json"
    )

    assert response.status_code == 201
    assert response.json()["content"] == "The alarm code at the warehouse is [redacted password or PIN]"
    assert SensitiveDataFinding.objects.filter(agent=agent, action="redacted", target="fact").count() == 1
