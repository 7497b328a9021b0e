"""Operator keys: the administration API's credential, stored hashed, created by the command or the admin and shown
once, revocable; never accepted where an agent key is expected, and the other way round."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from agents.models import OperatorKey
from agents.services.api_keys import api_key_digest
from agents.services.operator_keys import operator_key_create
from tests.api_support import api_key_for

pytestmark = pytest.mark.django_db


def test_the_command_prints_a_key_once_that_opens_the_administration_api(client, capsys):
    call_command("operator_key", "create", "--name", "ci", "--quiet")
    raw_key = capsys.readouterr().out.strip()

    stored = OperatorKey.objects.get(name="ci")
    assert raw_key.startswith("mop_") and stored.key_digest == api_key_digest(raw_key)
    assert raw_key not in str(OperatorKey.objects.filter(pk=stored.pk).values().get())
    assert client.get("/api/v1/admin/agents", HTTP_AUTHORIZATION=f"Bearer {raw_key}").status_code == 200
    call_command("operator_key", "list")
    assert raw_key not in capsys.readouterr().out

    call_command("operator_key", "revoke", stored.prefix)

    response = client.get("/api/v1/admin/agents", HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    assert response.status_code == 401 and "revoked" in response.json()["error"]["message"]


def test_the_admin_creates_a_key_shows_it_once_and_revokes_it(admin_client, client):
    response = admin_client.post("/admin/agents/operatorkey/add/", {"name": "deploys"}, follow=True)

    raw_key = [str(message) for message in response.context["messages"]][0].rsplit(" ", 1)[-1]
    key = OperatorKey.objects.get(name="deploys")
    assert key.key_digest == api_key_digest(raw_key) and key.created_by == "admin:admin"
    admin_client.post("/admin/agents/operatorkey/", {"action": "revoke_keys", "_selected_action": [key.pk]})
    assert client.get("/api/v1/admin/agents", HTTP_X_API_KEY=raw_key).status_code == 401


def test_an_operator_key_is_not_an_agent_key_and_an_agent_key_not_an_operator_key(client, agent):
    _, operator_key = operator_key_create(name="ops")
    agent_key = api_key_for(agent=agent)

    as_agent = client.get("/api/v1/facts", HTTP_AUTHORIZATION=f"Bearer {operator_key}")
    as_operator = client.get("/api/v1/admin/agents", HTTP_AUTHORIZATION=f"Bearer {agent_key}")

    assert as_agent.status_code == 401 and "operator key is not an agent API key" in as_agent.json()["error"]["message"]
    assert as_operator.status_code == 401 and "not an agent API key" in as_operator.json()["error"]["message"]
