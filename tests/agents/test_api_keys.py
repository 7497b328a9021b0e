import pytest
from django.core.management import call_command

from agents.models import Agent, AgentAPIKey
from agents.services.api_keys import api_key_create, api_key_digest


@pytest.mark.django_db
def test_keys_are_stored_hashed_and_revoked_keys_are_refused(client, agent):
    api_key, raw_key = api_key_create(agent=agent, name="bot")

    assert raw_key not in str(AgentAPIKey.objects.filter(pk=api_key.pk).values().get())
    assert api_key.key_digest == api_key_digest(raw_key)
    headers = {"HTTP_AUTHORIZATION": f"Bearer {raw_key}"}
    assert client.get("/api/v1/sessions/none", **headers).status_code == 404
    call_command("api_key", "revoke", api_key.prefix)
    assert client.get("/api/v1/sessions/none", **headers).status_code == 401


@pytest.mark.django_db
def test_command_creates_a_working_key_and_prints_it_once(client, capsys):
    call_command("api_key", "create", "--agent", "support-bot", "--create-agent", "--name", "prod")
    raw_key = capsys.readouterr().out.strip().splitlines()[-1]

    assert Agent.objects.filter(external_id="support-bot").exists()
    assert client.get("/api/v1/sessions/none", HTTP_X_API_KEY=raw_key).status_code == 404
    call_command("api_key", "list", "--agent", "support-bot")
    assert raw_key not in capsys.readouterr().out


@pytest.mark.django_db
def test_admin_creates_a_key_shows_it_once_and_revokes(admin_client, agent):
    response = admin_client.post(
        "/admin/agents/agentapikey/add/", {"agent": agent.pk, "name": "from admin"}, follow=True
    )

    shown = [str(message) for message in response.context["messages"]]
    raw_key = shown[0].rsplit(" ", 1)[-1]
    api_key = AgentAPIKey.objects.get(name="from admin")
    assert api_key.key_digest == api_key_digest(raw_key)
    admin_client.post(
        "/admin/agents/agentapikey/",
        {"action": "revoke_keys", "_selected_action": [api_key.pk]},
    )
    api_key.refresh_from_db()
    assert api_key.revoked_at is not None
