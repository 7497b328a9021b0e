"""Fixtures of the admin tests: a small memory for one user."""

from __future__ import annotations

import pytest

from agents.models import Agent, EndUser
from conversations.models import Message, Session
from facts.models import Fact
from facts.services.facts import fact_create
from reflections.models import ConsolidatedMemory, MemoryScope, Reflection
from reflections.services.consolidation import consolidated_memory_replace
from tests.factories import MessageFactory


@pytest.fixture
def said(session: Session) -> list[Message]:
    contents = ["I moved to Paris last spring.", "Nice! How do you like it?", "I love it, I work as a nurse there."]
    return [
        MessageFactory(session=session, role=role, content=content, token_count=len(content.split()))
        for role, content in zip(["user", "assistant", "user"], contents, strict=True)
    ]


@pytest.fixture
def paris_fact(agent: Agent, end_user: EndUser, session: Session, said: list[Message]) -> Fact:
    return fact_create(
        agent=agent,
        user=end_user,
        scopes=["user"],
        content="Gene lives in Paris.",
        source_session=session,
        source_messages=[said[0]],
        tags=["home"],
    )


@pytest.fixture
def user_blob(agent: Agent, end_user: EndUser) -> ConsolidatedMemory:
    consolidated_memory_replace(
        agent=agent, scope=MemoryScope.USER, user=end_user, session=None, content="- Gene is a nurse.", reason="first"
    )
    return consolidated_memory_replace(
        agent=agent,
        scope=MemoryScope.USER,
        user=end_user,
        session=None,
        content="- Gene is a nurse.\n- Gene lives in Paris.",
        reason="second",
    )


@pytest.fixture
def buffered_reflection(agent: Agent, end_user: EndUser) -> Reflection:
    return Reflection.objects.create(
        agent=agent, user=end_user, scope=MemoryScope.USER, content="Gene prefers short answers."
    )
