"""The agent's reflections and blobs, filtered, for the API."""

from __future__ import annotations

from django.db.models import QuerySet

from agents.models import Agent, EndUser
from conversations.models import Session
from core.exceptions import NotFoundError
from reflections.models import ConsolidatedMemory, Reflection


def reflections_list(
    *,
    agent: Agent,
    scope: str | None = None,
    user: EndUser | None = None,
    session: Session | None = None,
    absorbed: bool | None = None,
) -> QuerySet[Reflection]:
    queryset = Reflection.objects.filter(agent=agent).select_related("user", "session")
    if scope:
        queryset = queryset.filter(scope=scope)
    if user is not None:
        queryset = queryset.filter(user=user)
    if session is not None:
        queryset = queryset.filter(session=session)
    if absorbed is not None:
        queryset = queryset.filter(absorbed=absorbed)
    return queryset


def reflection_get(*, agent: Agent, reflection_id: int) -> Reflection:
    reflection = reflections_list(agent=agent).filter(pk=reflection_id).first()
    if reflection is None:
        raise NotFoundError(f"No reflection {reflection_id}.", fields={"id": ["not found"]})
    return reflection


def consolidated_memories_list(
    *, agent: Agent, scope: str | None = None, user: EndUser | None = None, session: Session | None = None
) -> QuerySet[ConsolidatedMemory]:
    queryset = ConsolidatedMemory.objects.filter(agent=agent).select_related("agent", "user", "session")
    if scope:
        queryset = queryset.filter(scope=scope)
    if user is not None:
        queryset = queryset.filter(user=user)
    if session is not None:
        queryset = queryset.filter(session=session)
    return queryset


def consolidated_memory_get(*, agent: Agent, memory_id: int) -> ConsolidatedMemory:
    memory = consolidated_memories_list(agent=agent).filter(pk=memory_id).first()
    if memory is None:
        raise NotFoundError(f"No blob {memory_id}.", fields={"id": ["not found"]})
    return memory
