"""The Python client's users, feedback and expiry methods, and the administration client (MemoryAdminClient with an
operator key), against a live server."""

from __future__ import annotations

import pytest

from agents.models import EndUser
from agents.services.operator_keys import operator_key_create
from tests.category_support import fact_filed
from tests.factories import AgentFactory
from tests.memory_client_support import MemoryAdminClient, MemoryAPIError, memory_client_for


@pytest.mark.django_db(transaction=True)
def test_users_feedback_and_expiry_through_the_client(live_server):
    client_agent = AgentFactory(external_id="agent-client")
    client = memory_client_for(agent=client_agent, base_url=live_server.url)
    client.messages_append("chat-1", [{"role": "user", "content": "I keep bees."}], user="gene")
    fact = client.fact_create(content="Gene's hotel room is 514", user="gene", expires_in="P7D")
    never = client.fact_update(fact["id"], never_expires=True)

    feedback = client.fact_feedback(fact["id"], rating="outdated", note="checked out", user="gene")

    assert fact["expires_at"] is not None and never["expires_at"] is None and never["id"] == fact["id"]
    assert feedback["outcome"] == "pending_review"  # written through the API: curated, an operator decides
    assert [user["user"] for user in client.users_list()] == ["gene"]
    assert client.user_get("gene")["memory"]["sessions"] == 1
    fact_filed(client_agent, EndUser.objects.get(external_id="gene"), "Gene keeps bees", "activities", "beekeeping")
    profile = client.profile("gene", categories=["activities"])
    assert [entry["value"] for entry in profile["categories"][0]["entries"]] == ["beekeeping"]
    with pytest.raises(MemoryAPIError) as unknown:
        client.profile("gene", categories=["astrology"])
    assert unknown.value.status == 400 and "category" in unknown.value.fields
    export = client.user_export("gene")
    assert export[0]["kind"] == "export" and any(row["kind"] == "fact" for row in export)
    assert client.session_delete("chat-1")["deleted_counts"]["conversations.Session"] == 1
    erased = client.user_erase("gene")
    assert erased["already_erased"] is False and client.user_erase("gene")["already_erased"] is True
    with pytest.raises(MemoryAPIError) as gone:
        client.user_get("gene")
    assert gone.value.status == 404


@pytest.mark.django_db(transaction=True)
def test_the_admin_client_creates_an_agent_its_key_and_a_webhook(live_server):
    _, operator_key = operator_key_create(name="client-tests")
    admin = MemoryAdminClient(live_server.url, operator_key)

    agent = admin.agent_create("acme", name="ACME", formation_msg_interval=20)
    changed = admin.agent_update("acme", formation_msg_interval=None, rag_enabled=False)
    key = admin.api_key_create("acme", name="backend")
    hook = admin.webhook_create("acme", url="http://127.0.0.1:9/hooks", event_types=["fact.created"])
    rotated = admin.webhook_update("acme", hook["id"], rotate_secret=True)

    assert agent["formation_msg_interval"] == 20 and changed["formation_msg_interval"] is None
    assert changed["rag_enabled"] is False and [a["agent"] for a in admin.agents_list()] == ["acme"]
    assert key["key"].startswith("mem_") and [k["id"] for k in admin.api_keys_list("acme")] == [key["id"]]
    assert rotated["secret"] != hook["secret"] and list(admin.webhook_deliveries("acme", hook["id"])) == []
    memory = memory_client_for(agent=AgentFactory(), base_url=live_server.url)
    memory.api_key = key["key"]
    assert memory.tools()  # the key works for its agent
    assert admin.api_key_revoke("acme", key["id"])["revoked_at"] is not None
    with pytest.raises(MemoryAPIError) as refused:
        MemoryAdminClient(live_server.url, key["key"]).agents_list().__next__()
    assert refused.value.status == 401
    admin.webhook_delete("acme", hook["id"])
    assert list(admin.webhooks_list("acme")) == []
