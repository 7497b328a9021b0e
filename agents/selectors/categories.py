"""The categories an agent files memory under: the default set (agents.categories), which an agent's own
configuration extends, replaces or narrows (docs/decisions/0054-per-agent-categories.md)."""

from __future__ import annotations

from dataclasses import dataclass

from agents.categories import DEFAULT_CATEGORIES, OTHER, MemoryCategory, custom_categories_read
from agents.models import Agent


@dataclass(frozen=True)
class CategoryConfiguration:
    """What formation reads of an agent's configuration: the categories statements are filed under (`other` last),
    those never remembered (which the extractor still names, so that what falls in them is dropped), and the
    operator's extraction instructions."""

    categories: tuple[MemoryCategory, ...]
    never_remembered: tuple[MemoryCategory, ...]
    instructions: str

    @property
    def custom(self) -> tuple[MemoryCategory, ...]:
        return tuple(category for category in (*self.categories, *self.never_remembered) if not category.is_default)


def agent_category_configuration(*, agent: Agent) -> CategoryConfiguration:
    custom = custom_categories_read(agent.memory_categories)
    defaults = [category for category in DEFAULT_CATEGORIES if category.slug != OTHER]
    every = [*custom, *(defaults if agent.default_categories_enabled else ()), *DEFAULT_CATEGORIES[-1:]]
    never = set(agent.categories_never_remembered or ()) - {OTHER}
    return CategoryConfiguration(
        categories=tuple(category for category in every if category.slug not in never),
        never_remembered=tuple(category for category in every if category.slug in never),
        instructions=agent.extraction_instructions.strip(),
    )


def agent_categories(*, agent: Agent) -> tuple[MemoryCategory, ...]:
    """Every category a statement of this agent's memory may be filed under, in the order they are shown: the
    agent's own first, then the defaults (unless it turned them off), `other` last; never those it never remembers."""
    return agent_category_configuration(agent=agent).categories
