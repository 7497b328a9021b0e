"""Facts filed under a category, as formation will file them (until it does, tests set the category themselves)."""

from __future__ import annotations

from typing import Any

from agents.models import Agent, EndUser
from facts.models import Fact
from facts.services.facts import fact_create


def fact_filed(agent: Agent, user: EndUser | None, content: str, category: str, value: str = "", **kwargs: Any) -> Fact:
    """A new current fact (the user's, or agent-wide without one) filed under `category` with `value` canonical."""
    scopes = ["user"] if user is not None else ["agent"]
    fact = fact_create(agent=agent, user=user, scopes=scopes, content=content, **kwargs)
    Fact.objects.filter(pk=fact.pk).update(category=category, category_value=value)
    fact.category, fact.category_value = category, value
    return fact
