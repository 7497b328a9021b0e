"""The REST API as an agent's client calls it: a new API key of the agent, and Django's test client carrying one."""

from __future__ import annotations

from django.test import Client

from agents.models import Agent
from agents.services.api_keys import api_key_create


def api_key_for(*, agent: Agent) -> str:
    """A new raw API key of the agent."""
    _, raw_key = api_key_create(agent=agent, name="tests")
    return raw_key


def api_client_for(agent: Agent) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {api_key_for(agent=agent)}")
