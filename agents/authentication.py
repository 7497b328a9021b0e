"""Who is calling: an agent by its API key, or a staff user by Django session (admin and operator pages), who
names the agent to act for with the X-Agent-ID header (external id)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions
from rest_framework.request import Request

from agents.models import Agent, AgentAPIKey
from agents.services.api_keys import api_key_authenticate
from core.runtime.logging import current_agent

# For the annotations only: imported while DRF reads its settings, rest_framework.views would be circular.
if TYPE_CHECKING:
    from rest_framework.views import APIView

AGENT_HEADER = "X-Agent-ID"


class AgentAPIKeyAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer <key>` (what OpenAI SDKs send) or `X-API-Key: <key>`. Both may be sent only with the
    same key: a request whose two credentials disagree is refused, whichever of them is valid, so that a proxy or
    client adding its own header can never decide silently which agent a request acts for."""

    def authenticate(self, request: Request) -> tuple[AgentAPIKeyUser, AgentAPIKey] | None:
        header_key = request.headers.get("X-API-Key")
        authorization = request.headers.get("Authorization")
        bearer_key = None
        if authorization is not None:
            scheme, _, credentials = authorization.partition(" ")
            if scheme.lower() == "bearer" and credentials.strip():
                bearer_key = credentials.strip()
            elif header_key:
                raise exceptions.AuthenticationFailed("Conflicting credentials: Authorization is not the X-API-Key.")
        if header_key and bearer_key and header_key != bearer_key:
            raise exceptions.AuthenticationFailed("Conflicting credentials: two different API keys were sent.")
        raw_key = header_key or bearer_key
        if not raw_key:
            return None
        api_key = api_key_authenticate(raw_key=raw_key)
        if api_key is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked API key.")
        return (AgentAPIKeyUser(api_key), api_key)

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


class AgentAPIKeyUser:
    """The request.user of an API-key request: authenticated, never staff, bound to one agent."""

    is_authenticated = True
    is_active = True
    is_staff = False
    is_superuser = False
    is_anonymous = False

    def __init__(self, api_key: AgentAPIKey) -> None:
        self.api_key = api_key
        self.pk = None
        self.username = f"agent:{api_key.agent.external_id}"

    def __str__(self) -> str:
        return self.username


class IsAgentOrStaff(permissions.BasePermission):
    message = "An agent API key, or a staff login, is required."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return isinstance(request.auth, AgentAPIKey) or bool(request.user and request.user.is_staff)


def request_agent(request: Request) -> Agent:
    """The agent a request acts for. Every query of an API view is filtered by it."""
    if isinstance(request.auth, AgentAPIKey):
        current_agent.set(request.auth.agent.external_id)
        return request.auth.agent
    external_id = request.headers.get(AGENT_HEADER) or request.query_params.get("agent")
    if not external_id:
        raise exceptions.ValidationError({"agent": [f"staff requests name the agent in the {AGENT_HEADER} header."]})
    agent = Agent.objects.filter(external_id=external_id).first()
    if agent is None:
        raise exceptions.NotFound(f"No agent {external_id!r}.")
    current_agent.set(agent.external_id)
    return agent


class AgentAPIKeyScheme(OpenApiAuthenticationExtension):
    target_class = AgentAPIKeyAuthentication
    name = "AgentAPIKey"

    def get_security_definition(self, auto_schema: object) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "The agent's API key."}
