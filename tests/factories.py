"""Factories of the rows tests build most (factory_boy): agents, their end users, sessions and messages. A test names
the fields it is about and leaves the rest to the factory: `AgentFactory()` is "another agent",
`SessionFactory(user=gene)` a session of Gene's (its agent is Gene's).

Memory is not built here. Facts, reflections, blobs and the entity graph are written through their services
(fact_create, reflection_create, consolidated_memory_replace, relations_write through tests/graph_support.py), which
embed, validate, version and link what they write; a factory writing their rows directly would build memory
production could not hold, and one calling the service would be a second spelling of the same call."""

from __future__ import annotations

import uuid

import factory
from factory.django import DjangoModelFactory

from agents.models import Agent, EndUser
from conversations.models import Message, Session


class AgentFactory(DjangoModelFactory):
    class Meta:
        model = Agent

    # Unique across the run, as a tenant's id must be in the whole database.
    external_id = factory.LazyFunction(lambda: f"agent-{uuid.uuid4().hex[:8]}")


class EndUserFactory(DjangoModelFactory):
    class Meta:
        model = EndUser

    agent = factory.SubFactory(AgentFactory)
    external_id = factory.Sequence(lambda number: f"end-user-{number}")


class SessionFactory(DjangoModelFactory):
    """A session of `user` (a new user of a new agent when not given), in the user's agent."""

    class Meta:
        model = Session

    user = factory.SubFactory(EndUserFactory)
    agent = factory.SelfAttribute("user.agent")
    external_id = factory.Sequence(lambda number: f"conversation-{number}")


class MessageFactory(DjangoModelFactory):
    """A user's message (in a new session when none is given). Its token count is the model's default (0) unless
    the test sets it: the session's counters are not touched, as ingestion would (session_append_messages)."""

    class Meta:
        model = Message

    session = factory.SubFactory(SessionFactory)
    role = Message.Role.USER
    content = factory.Sequence(lambda number: f"Message {number}.")
