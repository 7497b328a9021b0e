"""Python client for the agent memory service. See docs/api.md and docs/integrations.md for worked examples.

MemoryClient needs nothing beyond the standard library; AsyncMemoryClient needs httpx (the `async` extra), so it
is imported on first use."""

from typing import TYPE_CHECKING, Any

from memory_client.admin_client import MemoryAdminClient
from memory_client.client import MemoryAPIError, MemoryClient

if TYPE_CHECKING:
    from memory_client.async_client import AsyncMemoryClient

__all__ = ["AsyncMemoryClient", "MemoryAPIError", "MemoryAdminClient", "MemoryClient"]


def __getattr__(name: str) -> Any:
    if name == "AsyncMemoryClient":
        # Imported on first use: httpx is an optional dependency (the `async` extra), MemoryClient needs none.
        from memory_client.async_client import AsyncMemoryClient

        return AsyncMemoryClient
    raise AttributeError(f"module 'memory_client' has no attribute {name!r}")
