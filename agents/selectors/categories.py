"""The categories an agent files memory under: the default set (agents.categories), which an agent's own
configuration extends, replaces or narrows."""

from __future__ import annotations

from agents.categories import DEFAULT_CATEGORIES, MemoryCategory
from agents.models import Agent


def agent_categories(*, agent: Agent) -> tuple[MemoryCategory, ...]:
    """Every category a statement of this agent's memory may be filed under, in the order they are shown."""
    del agent  # the default set until agents configure their own
    return DEFAULT_CATEGORIES
