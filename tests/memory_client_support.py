"""Makes the Python client under clients/python importable in tests, which exercise the API through it."""

from __future__ import annotations

import sys

from agents.models import Agent
from tests.api_support import api_key_for
from tests.conftest import REPO_DIR

CLIENT_DIR = str(REPO_DIR / "clients" / "python")
if CLIENT_DIR not in sys.path:
    sys.path.insert(0, CLIENT_DIR)

from memory_client import AsyncMemoryClient, MemoryAdminClient, MemoryAPIError, MemoryClient  # noqa: E402

__all__ = [
    "AsyncMemoryClient",
    "MemoryAPIError",
    "MemoryAdminClient",
    "MemoryClient",
    "api_key_for",
    "memory_client_for",
]


def memory_client_for(*, agent: Agent, base_url: str) -> MemoryClient:
    return MemoryClient(base_url, api_key_for(agent=agent), timeout=60)
