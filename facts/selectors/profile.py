"""A user's profile: their current facts that carry a key, read as key → value (expired ones left out)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q
from django.utils import timezone

from agents.models import Agent, EndUser
from facts.models import Fact


@dataclass(frozen=True)
class ProfileEntry:
    key: str
    value: str
    fact_id: int
    version: int
    expires_at: datetime | None = None


def user_profile(*, agent: Agent, user: EndUser) -> dict[str, ProfileEntry]:
    """The value is the one given when the attribute was set (imports, the API, tools), else the fact's statement."""
    unexpired = Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now())
    facts = Fact.objects.filter(unexpired, agent=agent, user=user, valid_to__isnull=True).exclude(key="")
    return {
        fact.key: ProfileEntry(
            key=fact.key,
            value=str(fact.metadata.get("value") or fact.content),
            fact_id=fact.pk,
            version=fact.version,
            expires_at=fact.expires_at,
        )
        for fact in facts.order_by("key").only("key", "content", "metadata", "version", "expires_at")
    }
