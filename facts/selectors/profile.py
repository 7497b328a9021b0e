"""A user's profile: their current facts that carry a key, read as key → value."""

from __future__ import annotations

from dataclasses import dataclass

from agents.models import Agent, EndUser
from facts.models import Fact


@dataclass(frozen=True)
class ProfileEntry:
    key: str
    value: str
    fact_id: int
    version: int


def user_profile(*, agent: Agent, user: EndUser) -> dict[str, ProfileEntry]:
    """The value is the one given when the attribute was set (imports, the API, tools), else the fact's statement."""
    facts = Fact.objects.filter(agent=agent, user=user, valid_to__isnull=True).exclude(key="").order_by("key")
    return {
        fact.key: ProfileEntry(
            key=fact.key, value=str(fact.metadata.get("value") or fact.content), fact_id=fact.pk, version=fact.version
        )
        for fact in facts.only("key", "content", "metadata", "version")
    }
