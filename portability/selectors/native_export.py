"""The native export: every stored row of an agent's memory, or of one user's, as export lines
(portability/native_rows.py has the format)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from django.utils import timezone

from agents.models import Agent, EndUser
from conversations.models import Message, Session
from core.embeddings.spaces import embedding_space_active
from facts.models import Entity, Fact, Relation
from portability.native_rows import (
    AGENT_SETTINGS_EXCLUDED,
    FACT_MESSAGE_LINKS,
    FORMAT_NAME,
    FORMAT_VERSION,
    RELATION_LINKS,
    json_value,
    row_of,
    stored_fields,
)
from reflections.models import ConsolidatedMemory, ConsolidatedMemoryVersion, Reflection


def memories_export(*, agent: Agent, user: EndUser | None = None) -> Iterator[dict]:
    """Every stored row of the agent's memory, or of one user's (their sessions, messages, facts, entities and
    relations, reflections and blobs; agent-wide memory is then left out), as export lines."""
    agent_settings = {
        field.attname: json_value(getattr(agent, field.attname))
        for field in stored_fields(Agent)
        if field.attname not in AGENT_SETTINGS_EXCLUDED
    }
    yield {
        "kind": "export",
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "exported_at": timezone.now().isoformat(),
        "agent": {"external_id": agent.external_id, "settings": agent_settings},
        "user": user.external_id if user else None,
        "embedding_space": embedding_space_active().name,
    }
    by_user = {"user": user} if user else {}
    yield from (row_of("user", row) for row in EndUser.objects.filter(agent=agent, **({"pk": user.pk} if user else {})))
    yield from (row_of("session", row) for row in Session.objects.filter(agent=agent, **by_user).order_by("pk"))
    messages = Message.objects.filter(session__agent=agent, **({"session__user": user} if user else {}))
    yield from (row_of("message", row) for row in messages.order_by("pk").iterator(chunk_size=2000))
    facts = Fact.objects.filter(agent=agent, **by_user).order_by("pk")
    for batch_start in range(0, facts.count(), 2000):
        batch = list(facts[batch_start : batch_start + 2000])
        links: dict[str, defaultdict[int, list[int]]] = {name: defaultdict(list) for name in FACT_MESSAGE_LINKS}
        for name in FACT_MESSAGE_LINKS:
            through = getattr(Fact, name).through
            for fact_id, message_id in (
                through.objects.filter(fact__in=batch).order_by("message_id").values_list("fact_id", "message_id")
            ):
                links[name][fact_id].append(message_id)
        for fact in batch:
            yield row_of("fact", fact, m2m={name: links[name].get(fact.pk, []) for name in FACT_MESSAGE_LINKS})
    yield from (row_of("entity", row) for row in Entity.objects.filter(agent=agent, **by_user).order_by("pk"))
    relations = Relation.objects.filter(agent=agent, **by_user).order_by("pk")
    links = {name: defaultdict(list) for name in RELATION_LINKS}
    for name in RELATION_LINKS:
        through = getattr(Relation, name).through
        target = f"{RELATION_LINKS[name]._meta.model_name}_id"
        for relation_id, target_id in (
            through.objects.filter(relation__in=relations).order_by(target).values_list("relation_id", target)
        ):
            links[name][relation_id].append(target_id)
    for relation in relations.iterator(chunk_size=2000):
        yield row_of("relation", relation, m2m={name: links[name].get(relation.pk, []) for name in RELATION_LINKS})
    blobs = ConsolidatedMemory.objects.filter(agent=agent, **by_user).order_by("pk")
    yield from (row_of("blob", row) for row in blobs)
    versions = ConsolidatedMemoryVersion.objects.filter(memory__in=blobs).order_by("memory_id", "version")
    yield from (row_of("blob_version", row) for row in versions)
    yield from (row_of("reflection", row) for row in Reflection.objects.filter(agent=agent, **by_user).order_by("pk"))
