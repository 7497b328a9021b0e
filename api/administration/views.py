"""The administration API (/api/v1/admin/): what an operator does in the admin, from code. Agents with every per-agent
setting, their API keys (a key shown once), their webhook endpoints and the deliveries to them. Only an operator key
(or a staff login) is accepted: an agent's API key is refused here, as an operator key is refused on agent endpoints."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.authentication import SessionAuthentication
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.authentication import IsOperator, OperatorKeyAuthentication
from agents.models import Agent, AgentAPIKey
from agents.services.agents import agent_create, agent_update
from agents.services.api_keys import api_key_create, api_key_revoke
from api.administration import examples
from api.administration.serializers import (
    AgentCreateInputSerializer,
    AgentOutputSerializer,
    AgentSettingsSerializer,
    APIKeyCreatedOutputSerializer,
    APIKeyCreateInputSerializer,
    APIKeyOutputSerializer,
    WebhookCreateInputSerializer,
    WebhookDeliveryOutputSerializer,
    WebhookOutputSerializer,
    WebhookUpdateInputSerializer,
)
from core.api.pagination import StrictCursorPagination
from core.exceptions import NotFoundError
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.services.endpoints import webhook_endpoint_create, webhook_endpoint_update

AGENT_ID_PARAMETER = OpenApiParameter(
    "agent_id",
    {"type": "string", "maxLength": 200, "minLength": 1},
    OpenApiParameter.PATH,
    description="The agent's id (its external id).",
)


class OperatorView(APIView):
    authentication_classes = [OperatorKeyAuthentication, SessionAuthentication]
    permission_classes = [IsOperator]


class OperatorListView(ListAPIView):
    authentication_classes = [OperatorKeyAuthentication, SessionAuthentication]
    permission_classes = [IsOperator]
    pagination_class = StrictCursorPagination


def _agent(agent_id: str) -> Agent:
    agent = Agent.objects.filter(external_id=agent_id).first()
    if agent is None:
        raise NotFoundError(f"No agent {agent_id!r}.", fields={"agent": ["not found"]})
    return agent


def _webhook(agent_id: str, webhook_id: int) -> WebhookEndpoint:
    endpoint = WebhookEndpoint.objects.filter(agent=_agent(agent_id), pk=webhook_id).first()
    if endpoint is None:
        raise NotFoundError(f"No webhook endpoint {webhook_id}.", fields={"webhook": ["not found"]})
    return endpoint


class AgentListView(OperatorListView):
    serializer_class = AgentOutputSerializer

    def get_queryset(self) -> QuerySet[Agent]:
        return Agent.objects.all()

    @extend_schema(
        summary="List agents, newest first",
        description="Cursor-paginated: follow `next`.",
        examples=[examples.AGENT_LIST],
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        request=AgentCreateInputSerializer,
        responses={201: AgentOutputSerializer},
        summary="Create an agent with its settings",
        description="Settings not given take their defaults; an empty (null) threshold, cap or budget means the "
        "deployment's setting applies. Then issue it a key: POST /api/v1/admin/agents/{agent_id}/keys.",
        examples=[examples.AGENT_CREATE, examples.AGENT],
    )
    def post(self, request: Request) -> Response:
        data = AgentCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        settings = dict(data.validated_data)
        agent = agent_create(external_id=settings.pop("agent"), **settings)
        return Response(AgentOutputSerializer(agent).data, status=status.HTTP_201_CREATED)


class AgentDetailView(OperatorView):
    @extend_schema(
        parameters=[AGENT_ID_PARAMETER],
        responses=AgentOutputSerializer,
        summary="One agent's settings",
        examples=[examples.AGENT],
    )
    def get(self, request: Request, agent_id: str) -> Response:
        return Response(AgentOutputSerializer(_agent(agent_id)).data)

    @extend_schema(
        parameters=[AGENT_ID_PARAMETER],
        request=AgentSettingsSerializer,
        responses=AgentOutputSerializer,
        summary="Change an agent's settings (those given; null clears an override)",
        examples=[examples.AGENT_CHANGE, examples.AGENT],
    )
    def patch(self, request: Request, agent_id: str) -> Response:
        agent = _agent(agent_id)
        data = AgentSettingsSerializer(agent, data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        return Response(AgentOutputSerializer(agent_update(agent=agent, **data.validated_data)).data)


class APIKeyListView(OperatorListView):
    serializer_class = APIKeyOutputSerializer

    def get_queryset(self) -> QuerySet[AgentAPIKey]:
        return AgentAPIKey.objects.filter(agent=_agent(self.kwargs["agent_id"]))

    @extend_schema(parameters=[AGENT_ID_PARAMETER], summary="An agent's API keys (prefixes only), newest first")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        parameters=[AGENT_ID_PARAMETER],
        request=APIKeyCreateInputSerializer,
        responses={201: APIKeyCreatedOutputSerializer},
        summary="Issue an API key to an agent: the key is in this response only",
        examples=[examples.KEY_CREATE, examples.KEY_CREATED],
    )
    def post(self, request: Request, agent_id: str) -> Response:
        data = APIKeyCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        api_key, raw_key = api_key_create(agent=_agent(agent_id), name=data.validated_data["name"])
        api_key.key = raw_key  # type: ignore[attr-defined]  # shown once, read by the serializer
        return Response(APIKeyCreatedOutputSerializer(api_key).data, status=status.HTTP_201_CREATED)


class APIKeyDetailView(OperatorView):
    @extend_schema(
        parameters=[AGENT_ID_PARAMETER],
        request=None,
        responses={200: APIKeyOutputSerializer},
        summary="Revoke an API key: refused from the next request on, in every process",
    )
    def delete(self, request: Request, agent_id: str, key_id: int) -> Response:
        api_key = AgentAPIKey.objects.filter(agent=_agent(agent_id), pk=key_id).first()
        if api_key is None:
            raise NotFoundError(f"No API key {key_id}.", fields={"key": ["not found"]})
        return Response(APIKeyOutputSerializer(api_key_revoke(api_key=api_key)).data)


class WebhookListView(OperatorListView):
    serializer_class = WebhookOutputSerializer

    def get_queryset(self) -> QuerySet[WebhookEndpoint]:
        return WebhookEndpoint.objects.filter(agent=_agent(self.kwargs["agent_id"]))

    @extend_schema(parameters=[AGENT_ID_PARAMETER], summary="An agent's webhook endpoints, newest first")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        parameters=[AGENT_ID_PARAMETER],
        request=WebhookCreateInputSerializer,
        responses={201: WebhookOutputSerializer},
        summary="Add a webhook endpoint: its events are signed with the secret returned",
        description="The URL must be https:// on a host that resolves to public addresses only (private, loopback "
        "and link-local addresses are refused unless WEBHOOK_ALLOW_PRIVATE_ADDRESSES is set): a 400 names `url` "
        "otherwise. Requests carry the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature).",
        examples=[examples.WEBHOOK_CREATE, examples.WEBHOOK],
    )
    def post(self, request: Request, agent_id: str) -> Response:
        data = WebhookCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        endpoint = webhook_endpoint_create(agent=_agent(agent_id), **data.validated_data)
        return Response(WebhookOutputSerializer(endpoint).data, status=status.HTTP_201_CREATED)


class WebhookDetailView(OperatorView):
    @extend_schema(
        parameters=[AGENT_ID_PARAMETER],
        responses=WebhookOutputSerializer,
        summary="One webhook endpoint",
        examples=[examples.WEBHOOK],
    )
    def get(self, request: Request, agent_id: str, webhook_id: int) -> Response:
        return Response(WebhookOutputSerializer(_webhook(agent_id, webhook_id)).data)

    @extend_schema(
        parameters=[AGENT_ID_PARAMETER],
        request=WebhookUpdateInputSerializer,
        responses=WebhookOutputSerializer,
        summary="Change a webhook endpoint (what is given); rotate_secret gives it a new secret",
        examples=[examples.WEBHOOK_CHANGE, examples.WEBHOOK],
    )
    def patch(self, request: Request, agent_id: str, webhook_id: int) -> Response:
        data = WebhookUpdateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        endpoint = webhook_endpoint_update(endpoint=_webhook(agent_id, webhook_id), **data.validated_data)
        return Response(WebhookOutputSerializer(endpoint).data)

    @extend_schema(
        parameters=[AGENT_ID_PARAMETER],
        responses={204: None},
        summary="Remove a webhook endpoint, with its pending deliveries and delivery log",
    )
    def delete(self, request: Request, agent_id: str, webhook_id: int) -> Response:
        _webhook(agent_id, webhook_id).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


class WebhookDeliveryListView(OperatorListView):
    serializer_class = WebhookDeliveryOutputSerializer

    def get_queryset(self) -> QuerySet[WebhookDelivery]:
        endpoint = _webhook(self.kwargs["agent_id"], self.kwargs["webhook_id"])
        return WebhookDelivery.objects.filter(endpoint=endpoint).select_related("event")

    @extend_schema(
        parameters=[AGENT_ID_PARAMETER],
        summary="The delivery log of a webhook endpoint, newest first: status, attempts, last error",
        examples=[examples.DELIVERIES],
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)
