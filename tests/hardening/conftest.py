"""Two tenants for the hardening tests: agent A (the caller) and agent B (the victim), each with a key and memory of
every kind. Every text of B's carries B_MARKER, so a leak anywhere in a response is one substring check."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import pytest
from django.db import connection
from django.test import Client

from agents.models import Agent, EndUser
from agents.services.api_keys import api_key_create
from conversations.models import Session
from conversations.services.ingestion import MessageInput, session_append_messages
from facts.models import Fact, FactScope, FactWriter, ReferenceDocument
from facts.services.curation import fact_get_or_create
from facts.services.graph import EntityMention
from facts.services.reference_documents import reference_document_create
from reflections.models import ConsolidatedMemory, MemoryScope, Reflection
from reflections.services.consolidation import consolidated_memory_replace
from reflections.services.manual import reflection_create_manual
from tests.factories import AgentFactory
from tests.graph_support import USER, relation_stated
from webhooks.services.endpoints import webhook_endpoint_create

B_MARKER = "zanzibarquokka"
# Tables whose rows are memory: a hostile request must leave them exactly as they were.
STORED_TABLES = [
    "conversations_enduser",
    "conversations_session",
    "conversations_message",
    "facts_fact",
    "reflections_reflection",
    "reflections_consolidatedmemory",
    "reflections_consolidatedmemoryversion",
    "facts_referencedocument",
    "facts_referencechunk",
    "facts_entity",
    "facts_relation",
    "facts_factfeedback",
    "webhooks_webhookendpoint",
    "agents_operatorkey",
]


@dataclass(frozen=True)
class Tenant:
    agent: Agent
    key: str
    user: EndUser
    session: Session
    fact_ids: list[int]
    blob_ids: list[int]
    reflection_ids: list[int]
    message_ids: list[int]
    document_ids: list[int]
    entity_ids: list[int]
    key_id: int
    webhook_id: int

    def client(self, **headers: str) -> Client:
        """A client of this agent's key; a server error is a response to assert on, not an exception."""
        return Client(raise_request_exception=False, HTTP_AUTHORIZATION=f"Bearer {self.key}", **headers)


def _memory_of_every_kind(*, agent: Agent, user_id: str, session_id: str, marker: str) -> Tenant:
    api_key, key = api_key_create(agent=agent, name="hardening")
    # Inactive: the matrix needs the endpoint to exist, not deliveries, and a delivery a worker runs while a live
    # server test's database is flushed deadlocks with the flush (seen once on a fresh clone).
    endpoint = webhook_endpoint_create(agent=agent, url="http://127.0.0.1:9/hooks", description=marker, is_active=False)
    appended = session_append_messages(
        agent=agent,
        user_external_id=user_id,
        session_external_id=session_id,
        messages=[
            MessageInput(role="user", content=f"My locker code is 4471 {marker}.", metadata={"note": marker}),
            MessageInput(role="assistant", content=f"Noted, I will remember the {marker} locker."),
        ],
    )
    session = appended.session
    user = session.user
    facts = [
        fact_get_or_create(
            agent=agent,
            user=user,
            scopes=[FactScope.USER],
            content=f"The locker code is 4471 {marker}",
            written_by=FactWriter.API,
        ),
        fact_get_or_create(
            agent=agent,
            user=None,
            scopes=[FactScope.AGENT],
            content=f"The office wifi is {marker} five",
            written_by=FactWriter.API,
        ),
    ]
    reflections = [
        reflection_create_manual(agent=agent, scope=MemoryScope.AGENT, content=f"Agent notes {marker} carefully."),
        reflection_create_manual(agent=agent, scope=MemoryScope.USER, content=f"User likes {marker} jokes.", user=user),
        reflection_create_manual(
            agent=agent, scope=MemoryScope.SESSION, content=f"Session about {marker}.", user=user, session=session
        ),
    ]
    blobs = []
    for scope, scope_user, scope_session in (
        (MemoryScope.AGENT, None, None),
        (MemoryScope.USER, user, None),
        (MemoryScope.SESSION, user, session),
    ):
        for version in (1, 2):  # two versions: the past one is readable through the blob's detail
            blob = consolidated_memory_replace(
                agent=agent,
                scope=scope,
                user=scope_user,
                session=scope_session,
                content=f"Blob {version} of {scope}: {marker} details.",
                reason="hardening fixture",
            )
        blobs.append(blob)
    document, _ = reference_document_create(
        agent=agent, title=f"Handbook {marker}", content=f"Lockers are opened with the code {marker} 4471."
    )
    locker = relation_stated(
        fact=facts[0][0], subject=USER, predicate="uses", object=EntityMention(f"Locker {marker}")
    ).object_entity
    return Tenant(
        agent=agent,
        key=key,
        user=user,
        session=session,
        fact_ids=[fact.pk for fact, _ in facts],
        blob_ids=[blob.pk for blob in blobs],
        reflection_ids=[reflection.pk for reflection in reflections],
        message_ids=[message.pk for message in appended.messages],
        document_ids=[document.pk],
        entity_ids=[locker.pk],
        key_id=api_key.pk,
        webhook_id=endpoint.pk,
    )


@dataclass(frozen=True)
class Tenants:
    a: Tenant
    b: Tenant


@pytest.fixture
def tenants(db) -> Tenants:
    agent_a = AgentFactory(external_id="agent-a", name="Caller")
    agent_b = AgentFactory(external_id="agent-b", name="Victim")
    a = _memory_of_every_kind(agent=agent_a, user_id="alice", session_id="alice-chat", marker="alphawombat")
    b = _memory_of_every_kind(agent=agent_b, user_id="bob", session_id="bob-chat", marker=B_MARKER)
    return Tenants(a=a, b=b)


def stored_rows_digest(*, agent: Agent | None = None) -> dict[str, str]:
    """A digest of every row of the memory tables (of one agent, or all), to prove a request changed nothing."""
    digests = {}
    with connection.cursor() as cursor:
        for table in STORED_TABLES:
            cursor.execute(f"SELECT * FROM {table} ORDER BY id")  # noqa: S608 (constant table names)
            columns = [column.name for column in cursor.description]
            rows = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
            if agent is not None:
                rows = [row for row in rows if _belongs_to(table, row, agent)]
            digests[table] = hashlib.sha256(json.dumps(rows, default=str, sort_keys=True).encode()).hexdigest()
    return digests


def _belongs_to(table: str, row: dict, agent: Agent) -> bool:
    if table == "agents_operatorkey":
        return True  # no agent's: none may change
    if "agent_id" in row:
        return row["agent_id"] == agent.pk
    if table == "conversations_message":
        return Session.objects.filter(pk=row["session_id"], agent=agent).exists()
    if table == "reflections_consolidatedmemoryversion":
        return ConsolidatedMemory.objects.filter(pk=row["memory_id"], agent=agent).exists()
    if table == "facts_referencechunk":
        return ReferenceDocument.objects.filter(pk=row["document_id"], agent=agent).exists()
    raise AssertionError(f"no agent column known for {table}")


def memory_counts(agent: Agent) -> dict[str, int]:
    return {
        "facts": Fact.objects.filter(agent=agent).count(),
        "reflections": Reflection.objects.filter(agent=agent).count(),
        "blobs": ConsolidatedMemory.objects.filter(agent=agent).count(),
    }
