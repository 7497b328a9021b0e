"""Who is calling: an agent by its API key, or a staff user by Django session (admin and operator pages), who
names the agent to act for with the X-Agent-ID header (external id); on the administration API, an operator by an
operator key (or a staff user). Neither kind of key is accepted in the other's place."""

from __future__ import annotations

from typing import TYPE_CHECKING

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions
from rest_framework.request import Request

from agents.models import Agent, AgentAPIKey, OperatorKey
from agents.services.api_keys import api_key_authenticate
from agents.services.operator_keys import OPERATOR_KEY_PREFIX, operator_key_authenticate
from core.runtime.logging import current_agent

# For the annotations only: imported while DRF reads its settings, rest_framework.views would be circular.
if TYPE_CHECKING:
    from rest_framework.views import APIView

AGENT_HEADER = "X-Agent-ID"


def presented_key(request: Request) -> str | None:
    """The key a request sends: `Authorization: Bearer <key>` (what OpenAI SDKs send) or `X-API-Key: <key>`. Both may
    be sent only with the same key: a request whose two credentials disagree is refused, whichever of them is valid,
    so that a proxy or client adding its own header can never decide silently who a request acts as."""
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
    return header_key or bearer_key or None


class AgentAPIKeyAuthentication(authentication.BaseAuthentication):
    """An agent's API key (presented_key). An operator key is refused here, saying so: it manages agents through the
    administration API and never acts as one."""

    def authenticate(self, request: Request) -> tuple[AgentAPIKeyUser, AgentAPIKey] | None:
        raw_key = presented_key(request)
        if not raw_key:
            return None
        if raw_key.startswith(OPERATOR_KEY_PREFIX):
            raise exceptions.AuthenticationFailed(
                "An operator key is not an agent API key: it is accepted by the administration API (/api/v1/admin/) "
                "only."
            )
        api_key = api_key_authenticate(raw_key=raw_key)
        if api_key is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked API key.")
        return (AgentAPIKeyUser(api_key), api_key)

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


class OperatorKeyAuthentication(authentication.BaseAuthentication):
    """The administration API's credential: an operator key (presented_key). An agent's API key is refused here,
    saying so."""

    def authenticate(self, request: Request) -> tuple[OperatorKeyUser, OperatorKey] | None:
        raw_key = presented_key(request)
        if not raw_key:
            return None
        if not raw_key.startswith(OPERATOR_KEY_PREFIX):
            raise exceptions.AuthenticationFailed(
                "The administration API takes an operator key (manage.py operator_key create, or the admin), not an "
                "agent API key."
            )
        operator_key = operator_key_authenticate(raw_key=raw_key)
        if operator_key is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked operator key.")
        return (OperatorKeyUser(operator_key), operator_key)

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="admin"'


class OperatorKeyUser:
    """The request.user of an operator-key request: authenticated, bound to no agent."""

    is_authenticated = True
    is_active = True
    is_staff = False
    is_superuser = False
    is_anonymous = False

    def __init__(self, operator_key: OperatorKey) -> None:
        self.operator_key = operator_key
        self.pk = None
        self.username = f"operator:{operator_key.name}"

    def __str__(self) -> str:
        return self.username


class IsOperator(permissions.BasePermission):
    message = "An operator key, or a staff login, is required."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return isinstance(request.auth, OperatorKey) or bool(request.user and request.user.is_staff)


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


def request_requester(request: Request) -> str:
    """Who a request is, as records of what it did name them (an erasure record's requested_by): the API key by
    its prefix and name, or the staff user."""
    if isinstance(request.auth, AgentAPIKey):
        name = f" ({request.auth.name})" if request.auth.name else ""
        return f"api key {request.auth.prefix}…{name} of agent {request.auth.agent.external_id}"
    if isinstance(request.auth, OperatorKey):
        return f"operator key {request.auth.prefix}… ({request.auth.name})"
    return f"admin:{request.user.get_username()} (API)"


class AgentAPIKeyScheme(OpenApiAuthenticationExtension):
    target_class = AgentAPIKeyAuthentication
    name = "AgentAPIKey"

    def get_security_definition(self, auto_schema: object) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "The agent's API key."}


class OperatorKeyScheme(OpenApiAuthenticationExtension):
    target_class = OperatorKeyAuthentication
    name = "OperatorKey"

    def get_security_definition(self, auto_schema: object) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "An operator key (mop_...): the administration API."}
