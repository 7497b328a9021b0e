"""The administration API's client (/api/v1/admin/), with an operator key (`manage.py operator_key create`): agents
and every per-agent setting, their API keys, their webhook endpoints and delivery logs. An agent's API key is refused
there, as an operator key is refused by MemoryClient's endpoints."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from memory_client import _protocol as api
from memory_client.client import MemoryClient
from memory_client.types import (
    AgentInfo,
    APIKeyCreated,
    APIKeyInfo,
    WebhookDeliveryInfo,
    WebhookEndpointInfo,
)


class MemoryAdminClient:
    def __init__(self, base_url: str, operator_key: str, *, timeout: float = 30.0, max_retries: int = 2) -> None:
        # The same transport as MemoryClient (urllib, retries of throttled requests), with the operator's key.
        self._http = MemoryClient(base_url, operator_key, timeout=timeout, max_retries=max_retries)

    # --- agents ---------------------------------------------------------------------------------------------------

    def agents_list(self, *, page_size: int = 50) -> Iterator[AgentInfo]:
        return cast(Iterator[AgentInfo], self._http._paginate(api.agents_list(page_size=page_size)))

    def agent_create(self, agent: str, **settings: Any) -> AgentInfo:
        """A new agent with these settings (the names of AgentInfo; the rest take their defaults)."""
        return cast(AgentInfo, self._http._call(api.agent_create(agent=agent, settings=settings)))

    def agent_get(self, agent: str) -> AgentInfo:
        return cast(AgentInfo, self._http._call(api.agent_get(agent)))

    def agent_update(self, agent: str, **settings: Any) -> AgentInfo:
        """Change the settings given; None clears an override (the deployment's setting applies again)."""
        return cast(AgentInfo, self._http._call(api.agent_update(agent, settings=settings)))

    # --- API keys -------------------------------------------------------------------------------------------------

    def api_keys_list(self, agent: str, *, page_size: int = 50) -> Iterator[APIKeyInfo]:
        return cast(Iterator[APIKeyInfo], self._http._paginate(api.api_keys_list(agent, page_size=page_size)))

    def api_key_create(self, agent: str, *, name: str = "") -> APIKeyCreated:
        """A new key of the agent: `key` is in this result only."""
        return cast(APIKeyCreated, self._http._call(api.api_key_create(agent, name=name)))

    def api_key_revoke(self, agent: str, key_id: int) -> APIKeyInfo:
        return cast(APIKeyInfo, self._http._call(api.api_key_revoke(agent, key_id)))

    # --- webhooks -------------------------------------------------------------------------------------------------

    def webhooks_list(self, agent: str, *, page_size: int = 50) -> Iterator[WebhookEndpointInfo]:
        return cast(Iterator[WebhookEndpointInfo], self._http._paginate(api.webhooks_list(agent, page_size=page_size)))

    def webhook_create(
        self,
        agent: str,
        *,
        url: str,
        event_types: list[str] | None = None,
        description: str | None = None,
        secret: str | None = None,
    ) -> WebhookEndpointInfo:
        """An endpoint for the agent's events (every type unless given), signed with the secret returned."""
        endpoint = {"url": url, "event_types": event_types, "description": description, "secret": secret}
        return cast(WebhookEndpointInfo, self._http._call(api.webhook_create(agent, endpoint=endpoint)))

    def webhook_get(self, agent: str, webhook_id: int) -> WebhookEndpointInfo:
        return cast(WebhookEndpointInfo, self._http._call(api.webhook_get(agent, webhook_id)))

    def webhook_update(
        self,
        agent: str,
        webhook_id: int,
        *,
        url: str | None = None,
        event_types: list[str] | None = None,
        description: str | None = None,
        is_active: bool | None = None,
        rotate_secret: bool | None = None,
    ) -> WebhookEndpointInfo:
        changes = {
            "url": url,
            "event_types": event_types,
            "description": description,
            "is_active": is_active,
            "rotate_secret": rotate_secret,
        }
        return cast(WebhookEndpointInfo, self._http._call(api.webhook_update(agent, webhook_id, changes=changes)))

    def webhook_delete(self, agent: str, webhook_id: int) -> None:
        self._http._call(api.webhook_delete(agent, webhook_id))

    def webhook_deliveries(self, agent: str, webhook_id: int, *, page_size: int = 50) -> Iterator[WebhookDeliveryInfo]:
        """The endpoint's delivery log, newest first: status, attempts, last error."""
        call = api.webhook_deliveries(agent, webhook_id, page_size=page_size)
        return cast(Iterator[WebhookDeliveryInfo], self._http._paginate(call))
