"""The service's own export format, JSON lines: the header, the order of row kinds and how a stored row becomes a line
and back. The export is portability.selectors.native_export, the import portability.services.native_import.

The first line is a header (`kind: "export"`, the agent's settings, the user when the export is one user's). Then one
line per row, in an order where every reference points backwards except a fact's `superseded_by` and an entity's
`merged_into`: users, sessions, messages, facts (every version, with the messages they came from and were closed by),
entities, relations (current and ended, with the fact versions and messages they came from), blobs, past blob
versions, reflections. A row is `{"kind", "id", "fields", "m2m"}`; `fields` holds every stored column by its column
name, so a field added to a model is exported without changing this file. Vectors are not exported: they belong to an
embedding space, and the import embeds every fact and message in the target's active space."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any

from django.db import models

from agents.models import EndUser
from conversations.models import Message, Session
from facts.models import Entity, Fact, Relation
from reflections.models import ConsolidatedMemory, ConsolidatedMemoryVersion, Reflection

FORMAT_NAME = "agent-memory-native"
FORMAT_VERSION = 1
# The order of kinds in an export; each row refers only to kinds before it (facts and entities also to later ones).
KINDS: dict[str, type[models.Model]] = {
    "user": EndUser,
    "session": Session,
    "message": Message,
    "fact": Fact,
    "entity": Entity,
    "relation": Relation,
    "blob": ConsolidatedMemory,
    "blob_version": ConsolidatedMemoryVersion,
    "reflection": Reflection,
}
FACT_MESSAGE_LINKS = ("source_messages", "closed_by_messages")
RELATION_LINKS = {"source_facts": Fact, "source_messages": Message}
# Message-id cursors stored as plain integers: remapped to the new id of the last exported message at or before them.
MESSAGE_CURSORS = {Session: "formed_through_message_id", ConsolidatedMemory: "summarized_through_message_id"}
AGENT_SETTINGS_EXCLUDED = {"id", "external_id", "created_at", "updated_at"}


def stored_fields(model: type[models.Model]) -> list[models.Field]:
    return [
        field
        for field in model._meta.concrete_fields
        if not field.primary_key and not isinstance(field, models.GeneratedField)
    ]


def json_value(value: object) -> object:
    if isinstance(value, date):  # datetimes too
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def row_of(kind: str, obj: models.Model, m2m: dict | None = None) -> dict:
    fields = {field.attname: json_value(getattr(obj, field.attname)) for field in stored_fields(type(obj))}
    fields.pop("agent_id", None)
    row = {"kind": kind, "id": obj.pk, "fields": fields}
    if m2m is not None:
        row["m2m"] = m2m
    return row


def parsed_value(field: models.Field, value: Any) -> object:
    """The field's value from its JSON value in a row."""
    if value is None:
        return None
    if isinstance(field, models.DateTimeField):
        return datetime.fromisoformat(value)
    if isinstance(field, models.DateField):  # after DateTimeField, its subclass
        return date.fromisoformat(value)
    if isinstance(field, models.UUIDField):
        return uuid.UUID(value)
    return value
