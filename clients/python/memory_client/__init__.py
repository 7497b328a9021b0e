"""Python client for the agent memory service. See docs/api.md for worked examples."""

from memory_client.client import MemoryAPIError, MemoryClient

__all__ = ["MemoryAPIError", "MemoryClient"]
