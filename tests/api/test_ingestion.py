import pytest
from django.test import Client

from conversations.models import Message, Session
from tests.api_support import api_client_for
from tests.factories import AgentFactory


def _post(client: Client, path: str, body: dict):
    return client.post(path, body, content_type="application/json")


@pytest.mark.django_db
def test_requests_without_a_valid_key_are_refused(client, agent):
    assert client.post("/api/v1/sessions", {}, content_type="application/json").status_code in (401, 403)
    bad = Client(HTTP_AUTHORIZATION="Bearer mem_not-a-key")
    response = bad.post("/api/v1/sessions", {"user": "u", "session": "s"}, content_type="application/json")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


@pytest.mark.django_db
def test_append_stores_messages_with_token_counts_and_creates_the_session(api, agent):
    response = _post(
        api,
        "/api/v1/sessions/chat-1/messages",
        {
            "user": "user-42",
            "messages": [
                {"role": "user", "content": "I moved to Lisbon last month.", "idempotency_key": "m-1"},
                {"role": "assistant", "content": "How are you finding it?", "idempotency_key": "m-2"},
            ],
        },
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["created_count"] == 2
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"]
    assert all(m["token_count"] > 0 for m in body["messages"])
    session = Session.objects.get(agent=agent, external_id="chat-1")
    assert session.user.external_id == "user-42"
    assert session.message_count == 2 and session.token_count == sum(m["token_count"] for m in body["messages"])


@pytest.mark.django_db
def test_a_retried_request_stores_nothing_twice(api):
    body = {
        "user": "u",
        "messages": [
            {"role": "user", "content": "first", "idempotency_key": "k1"},
            {"role": "user", "content": "second", "idempotency_key": "k2"},
        ],
    }
    first = _post(api, "/api/v1/sessions/s/messages", body).json()
    body["messages"].append({"role": "user", "content": "third", "idempotency_key": "k3"})

    retried = _post(api, "/api/v1/sessions/s/messages", body)

    assert retried.status_code == 201 and retried.json()["created_count"] == 1
    assert [m["id"] for m in retried.json()["messages"][:2]] == [m["id"] for m in first["messages"]]
    assert Message.objects.filter(session__external_id="s").count() == 3
    again = _post(api, "/api/v1/sessions/s/messages", body)
    assert again.status_code == 200 and again.json()["created_count"] == 0
    assert Session.objects.get(external_id="s").message_count == 3


@pytest.mark.django_db
def test_a_batch_of_500_is_accepted_and_501_is_refused_naming_the_field(api):
    batch = [{"role": "user", "content": f"message number {i}"} for i in range(500)]
    assert _post(api, "/api/v1/sessions/big/messages", {"user": "u", "messages": batch}).status_code == 201

    response = _post(api, "/api/v1/sessions/big/messages", {"user": "u", "messages": batch + batch[:1]})

    assert response.status_code == 400
    assert "messages" in response.json()["error"]["fields"]
    assert Message.objects.filter(session__external_id="big").count() == 500


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("messages", "field"),
    [
        ([{"role": "robot", "content": "hi"}], "messages.0.role"),
        ([{"role": "user"}], "messages.0.content"),
        ([{"role": "user", "content": "ok", "created_at": "yesterday"}], "messages.0.created_at"),
        ([], "messages"),
    ],
)
def test_bad_messages_get_a_400_naming_the_field_and_store_nothing(api, messages, field):
    _post(api, "/api/v1/sessions/s/messages", {"user": "u", "messages": [{"role": "user", "content": "kept"}]})

    response = _post(api, "/api/v1/sessions/s/messages", {"user": "u", "messages": messages})

    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]
    assert list(Message.objects.values_list("content", flat=True)) == ["kept"]


@pytest.mark.django_db
def test_a_new_session_needs_its_user_and_keeps_it(api):
    missing = _post(api, "/api/v1/sessions/s/messages", {"messages": [{"role": "user", "content": "hi"}]})
    assert missing.status_code == 409 or missing.status_code == 400
    assert "user" in missing.json()["error"]["fields"]

    _post(api, "/api/v1/sessions/s/messages", {"user": "a", "messages": [{"role": "user", "content": "hi"}]})
    other_user = _post(
        api, "/api/v1/sessions/s/messages", {"user": "b", "messages": [{"role": "user", "content": "x"}]}
    )
    assert other_user.status_code == 409
    assert Message.objects.count() == 1


@pytest.mark.django_db
def test_another_agents_key_never_sees_the_session(api, agent):
    _post(api, "/api/v1/sessions/private/messages", {"user": "u", "messages": [{"role": "user", "content": "x"}]})
    intruder = api_client_for(AgentFactory())

    for response in (
        intruder.get("/api/v1/sessions/private"),
        intruder.get("/api/v1/sessions/private/messages"),
        _post(intruder, "/api/v1/sessions/private/close", {}),
        _post(intruder, "/api/v1/sessions/private/form", {}),
    ):
        assert response.status_code == 404
        assert "x" not in response.content.decode()


@pytest.mark.django_db
def test_messages_read_back_in_order_with_cursor_pagination(api):
    batch = [{"role": "user", "content": f"m{i}"} for i in range(7)]
    _post(api, "/api/v1/sessions/s/messages", {"user": "u", "messages": batch})

    first = api.get("/api/v1/sessions/s/messages?page_size=5").json()
    second = api.get(first["next"]).json()

    assert [m["content"] for m in first["results"] + second["results"]] == [f"m{i}" for i in range(7)]
    assert second["next"] is None


@pytest.mark.django_db
def test_the_message_interval_queues_formation_at_ingestion(api, agent):
    agent.formation_msg_interval = 3
    agent.save()
    two = [{"role": "user", "content": f"m{i}"} for i in range(2)]

    _post(api, "/api/v1/sessions/s/messages", {"user": "u", "messages": two})
    assert Session.objects.get(external_id="s").formation_status == "idle"
    _post(api, "/api/v1/sessions/s/messages", {"user": "u", "messages": two})
    assert Session.objects.get(external_id="s").formation_status == "queued"


@pytest.mark.django_db
def test_close_and_form_queue_formation(api):
    _post(api, "/api/v1/sessions/s/messages", {"user": "u", "messages": [{"role": "user", "content": "x"}]})

    formed = _post(api, "/api/v1/sessions/s/form", {})
    assert formed.status_code == 202 and formed.json()["queued"] is True
    assert _post(api, "/api/v1/sessions/s/form", {}).json()["queued"] is False
    closed = _post(api, "/api/v1/sessions/s/close", {})
    assert closed.status_code == 202 and closed.json()["closed_at"]
