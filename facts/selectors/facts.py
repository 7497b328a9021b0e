"""Reads of facts for the facts API and the memory tools: every read is filtered by the calling agent."""

from __future__ import annotations

import uuid

from django.db.models import QuerySet

from agents.models import Agent, EndUser
from core.exceptions import NotFoundError
from facts.models import Fact
from facts.services.facts import fact_content_hash


def fact_get(*, agent: Agent, fact_id: int) -> Fact:
    """One version of one of the agent's facts; another agent's id is not found, like a missing one."""
    fact = Fact.objects.select_related("user", "source_session").filter(agent=agent, pk=fact_id).first()
    if fact is None:
        raise NotFoundError(f"No fact {fact_id}.", fields={"id": ["not found"]})
    return fact


def facts_list(
    *,
    agent: Agent,
    user: EndUser | None = None,
    scope: str | None = None,
    tag: str | None = None,
    include_closed: bool = False,
) -> QuerySet[Fact]:
    """The agent's facts, current only unless include_closed; `user` keeps the facts that user owns, `scope` those
    with that scope, `tag` those with that tag."""
    queryset = Fact.objects.filter(agent=agent).select_related("user", "source_session").defer("search_vector")
    if not include_closed:
        queryset = queryset.filter(valid_to__isnull=True)
    if user is not None:
        queryset = queryset.filter(user=user)
    if scope:
        queryset = queryset.filter(scopes__contains=[scope])
    if tag:
        queryset = queryset.filter(tags__contains=[tag])
    return queryset


def fact_current_same_content(
    *, agent: Agent, user: EndUser | None, content: str, other_than_lineage: uuid.UUID | None = None
) -> Fact | None:
    """The current fact of the scope that already says `content` (same normalised hash), if any: the one-current-fact
    rule that writing another would break. A fact's own lineage (when editing it) does not count."""
    same = Fact.objects.filter(agent=agent, user=user, content_hash=fact_content_hash(content), valid_to__isnull=True)
    if other_than_lineage is not None:
        same = same.exclude(lineage=other_than_lineage)
    return same.first()
