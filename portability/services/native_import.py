"""The lossless import of a native export (portability/native_rows.py has the format).

Import maps exported ids to new rows and is idempotent: users and sessions are matched by external id, messages by
idempotency key or (time, role, content), facts by (lineage, version), entities by scope and name (the user's own by
its user), relations by subject, predicate, object and valid_from, blobs by scope, past versions by number and
reflections by scope and content; what is already there is not written again."""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import TypeVar, cast

from django.db import models, transaction

from agents.models import Agent, EndUser
from conversations.models import Message, Session
from conversations.services.message_embeddings import message_embedding_enqueue, messages_embed_missing
from conversations.services.restore import (
    end_user_restore,
    messages_restore,
    session_counters_add,
    session_restore,
)
from core.embeddings.spaces import embedding_provider_for_space, embedding_space_active
from facts.grammar.categories import statement_file
from facts.models import Entity, Fact, Relation
from facts.services.restore import (
    entity_merge_restore,
    entity_restore,
    fact_supersession_restore,
    fact_world_time_of_an_earlier_release,
    facts_restore,
    relation_restore,
)
from formation.services.formation_cursor import session_cursor_restore
from portability.formats.common import ImportFormatError
from portability.native_rows import (
    FACT_MESSAGE_LINKS,
    FORMAT_NAME,
    FORMAT_VERSION,
    KINDS,
    MESSAGE_CURSORS,
    parsed_value,
    stored_fields,
)
from portability.services.importer import ImportReport, ProgressCallback
from reflections.models import ConsolidatedMemory, ConsolidatedMemoryVersion, Reflection
from reflections.services.consolidation import consolidated_memory_replace
from reflections.services.restore import (
    blob_cursor_restore,
    blob_restore,
    blob_version_restore,
    reflection_restore,
)

BATCH_SIZE = 500

_M = TypeVar("_M", bound=models.Model)


class _NativeImport:
    def __init__(
        self,
        *,
        agent: Agent,
        report: ImportReport,
        embed: bool,
        embed_messages_here: bool,
        on_progress: ProgressCallback,
    ) -> None:
        self.agent = agent
        self.report = report
        self.embed = embed
        self.embed_messages_here = embed_messages_here
        self.on_progress = on_progress
        self.ids: dict[type[models.Model], dict[int, int]] = defaultdict(dict)
        self.preexisting_sessions: set[int] = set()
        self.message_signatures: dict[int, set] = {}
        # Messages and tokens this import added to sessions that existed before it, for their counters (the interval
        # trigger reads them); a session the import creates keeps its exported counters.
        self.added_to_session: dict[int, list[int]] = defaultdict(lambda: [0, 0])
        self.deferred_supersessions: list[tuple[int, int]] = []
        self.deferred_merges: list[tuple[int, int]] = []
        self.deferred_cursors: list[tuple[type[models.Model], int, int]] = []
        self.conflicting_blobs: set[int] = set()
        self.lineages: dict[uuid.UUID, uuid.UUID] = {}

    # --- rows to model instances ------------------------------------------------------------------------------------

    def _instance(self, model: type[_M], row: dict, *, deferred: tuple[str, ...] = ()) -> _M:
        values = {}
        for field in stored_fields(model):
            if field.attname not in row["fields"] or field.attname in deferred:
                continue
            value = parsed_value(field, row["fields"][field.attname])
            if isinstance(field, models.ForeignKey) and value is not None:
                value = (
                    self.agent.pk
                    if field.related_model is Agent
                    else self.ids[field.related_model].get(cast(int, value))
                )
            values[field.attname] = value
        if any(field.name == "agent" for field in model._meta.concrete_fields):
            values["agent_id"] = self.agent.pk
        return model(**values)

    @staticmethod
    def _automatic_times(model: type[models.Model], row: dict) -> dict:
        """The exported values of the auto_now / auto_now_add fields, which an insert overwrites."""
        return {
            field.attname: parsed_value(field, row["fields"][field.attname])
            for field in stored_fields(model)
            if (getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False))
            and row["fields"].get(field.attname) is not None
        }

    def _defer_cursor(self, model: type[models.Model], obj: models.Model, row: dict) -> None:
        name = MESSAGE_CURSORS.get(model)
        if name and row["fields"].get(name) is not None:
            self.deferred_cursors.append((model, obj.pk, row["fields"][name]))

    # --- kinds ------------------------------------------------------------------------------------------------------

    def user(self, rows: list[dict]) -> None:
        for row in rows:
            user = EndUser.objects.filter(agent=self.agent, external_id=row["fields"]["external_id"]).first()
            self.report.add("users", "existing" if user is not None else "added")
            if user is None:
                user = end_user_restore(user=self._instance(EndUser, row), times=self._automatic_times(EndUser, row))
            self.ids[EndUser][row["id"]] = user.pk

    def session(self, rows: list[dict]) -> None:
        for row in rows:
            existing = Session.objects.filter(agent=self.agent, external_id=row["fields"]["external_id"]).first()
            if existing is not None:
                self.preexisting_sessions.add(existing.pk)
                self.report.add("sessions", "existing")
            else:
                existing = session_restore(session=self._instance(Session, row, deferred=(MESSAGE_CURSORS[Session],)))
                self._defer_cursor(Session, existing, row)
                self.report.add("sessions", "added")
            self.ids[Session][row["id"]] = existing.pk

    def _message_signature(self, message: Message) -> tuple:
        return (
            (message.idempotency_key,)
            if message.idempotency_key
            else (message.created_at, message.role, message.content)
        )

    def message(self, rows: list[dict]) -> None:
        new, new_rows = [], []
        for row in rows:
            message = self._instance(Message, row)
            if message.session_id is None:
                self.report.add("messages", "invalid")
                continue
            if message.session_id in self.preexisting_sessions:
                if message.session_id not in self.message_signatures:
                    self.message_signatures[message.session_id] = {
                        self._message_signature(stored)
                        for stored in Message.objects.filter(session_id=message.session_id)
                    }
                signatures = self.message_signatures[message.session_id]
                if self._message_signature(message) in signatures:
                    self.report.add("messages", "existing")
                    continue
                signatures.add(self._message_signature(message))
            new.append(message)
            new_rows.append(row)
        with transaction.atomic():
            created = messages_restore(messages=new, times=[self._automatic_times(Message, row) for row in new_rows])
        for message, row in zip(created, new_rows, strict=True):
            self.ids[Message][row["id"]] = message.pk
            if message.session_id in self.preexisting_sessions:
                self.added_to_session[message.session_id][0] += 1
                self.added_to_session[message.session_id][1] += message.token_count
        self.report.add("messages", "added", len(created))
        if self.embed and created:
            ids = [message.pk for message in created]
            if self.embed_messages_here:
                self.report.embedded["messages"] += messages_embed_missing(message_ids=ids)
            else:
                message_embedding_enqueue(message_ids=ids)
                self.report.queued["message embeddings"] += len(ids)

    def _lineage(self, exported: uuid.UUID) -> uuid.UUID:
        """The exported lineage, unless another agent's facts use it (an export imported beside its source)."""
        if exported not in self.lineages:
            taken = Fact.objects.filter(lineage=exported).exclude(agent=self.agent).exists()
            self.lineages[exported] = uuid.uuid5(exported, f"agent:{self.agent.external_id}") if taken else exported
        return self.lineages[exported]

    def fact(self, rows: list[dict]) -> None:
        new, new_rows = [], []
        for row in rows:
            fact = self._instance(Fact, row, deferred=("superseded_by_id",))
            if "held_from_precision" not in row["fields"]:
                fact_world_time_of_an_earlier_release(fact=fact)
            if "category" not in row["fields"]:  # exported before categories: filed by the offline lexicons
                filing = statement_file(fact.content)
                fact.category, fact.category_value = filing.category, filing.value
            fact.lineage = self._lineage(fact.lineage)
            stored = Fact.objects.filter(agent=self.agent, lineage=fact.lineage, version=fact.version).first()
            if stored is None and fact.valid_to is None:
                stored = Fact.objects.filter(
                    agent=self.agent, user_id=fact.user_id, content_hash=fact.content_hash, valid_to__isnull=True
                ).first()
                if stored is not None:
                    self.report.add("facts", "duplicate")
            elif stored is not None:
                self.report.add("facts", "existing")
            if stored is not None:
                self.ids[Fact][row["id"]] = stored.pk
                continue
            new.append(fact)
            new_rows.append(row)
        if not new:
            return
        space = embedding_space_active()
        vectors = embedding_provider_for_space(space=space).embed([f.content for f in new]) if self.embed else None
        with transaction.atomic():
            created = facts_restore(
                facts=new,
                message_links={
                    name: [
                        [
                            self.ids[Message][message_id]
                            for message_id in row.get("m2m", {}).get(name, [])
                            if message_id in self.ids[Message]
                        ]
                        for row in new_rows
                    ]
                    for name in FACT_MESSAGE_LINKS
                },
                space=space,
                vectors=vectors,
            )
            for fact, row in zip(created, new_rows, strict=True):
                self.ids[Fact][row["id"]] = fact.pk
                if row["fields"].get("superseded_by_id") is not None:
                    self.deferred_supersessions.append((fact.pk, row["fields"]["superseded_by_id"]))
            if vectors is not None:
                self.report.embedded["facts"] += len(created)
        self.report.add("facts", "added", len(created))

    def entity(self, rows: list[dict]) -> None:
        for row in rows:
            entity = self._instance(Entity, row, deferred=("merged_into_id",))
            if row["fields"].get("user_id") is not None and entity.user_id is None:
                self.report.add("entities", "invalid")
                continue
            scope = Entity.objects.filter(agent=self.agent, user_id=entity.user_id)
            stored = (
                scope.filter(is_user=True).first()
                if entity.is_user
                else scope.filter(
                    is_user=False,
                    name__iexact=entity.name,
                    merged_into__isnull=row["fields"].get("merged_into_id") is None,
                ).first()
            )
            if stored is not None:
                self.report.add("entities", "existing")
            else:
                stored = entity_restore(entity=entity, times=self._automatic_times(Entity, row))
                if row["fields"].get("merged_into_id") is not None:
                    self.deferred_merges.append((stored.pk, row["fields"]["merged_into_id"]))
                self.report.add("entities", "added")
            self.ids[Entity][row["id"]] = stored.pk

    def relation(self, rows: list[dict]) -> None:
        for row in rows:
            relation = self._instance(Relation, row)
            exported_object = row["fields"].get("object_entity_id")
            if relation.subject_id is None or (exported_object is not None and relation.object_entity_id is None):
                self.report.add("relations", "invalid")
                continue
            same = Relation.objects.filter(
                subject_id=relation.subject_id,
                predicate=relation.predicate,
                object_entity_id=relation.object_entity_id,
                object_value=relation.object_value,
            )
            if same.filter(valid_from=relation.valid_from).exists() or (
                relation.valid_to is None and same.filter(valid_to__isnull=True).exists()
            ):
                self.report.add("relations", "existing")
                continue
            links = row.get("m2m", {})
            if "category" not in row["fields"]:  # exported before categories: its fact's
                relation.category = (
                    Fact.objects.filter(pk__in=[self.ids[Fact].get(pk) for pk in links.get("source_facts", [])])
                    .values_list("category", flat=True)
                    .first()
                    or ""
                )
            relation_restore(
                relation=relation,
                source_fact_ids=[self.ids[Fact][pk] for pk in links.get("source_facts", []) if pk in self.ids[Fact]],
                source_message_ids=[
                    self.ids[Message][pk] for pk in links.get("source_messages", []) if pk in self.ids[Message]
                ],
                world_time_from_facts="held_from_precision" not in row["fields"],
            )
            self.report.add("relations", "added")

    def blob(self, rows: list[dict]) -> None:
        for row in rows:
            blob = self._instance(ConsolidatedMemory, row, deferred=(MESSAGE_CURSORS[ConsolidatedMemory],))
            key = {"scope": blob.scope, "user_id": blob.user_id, "session_id": blob.session_id}
            stored = ConsolidatedMemory.objects.filter(agent=self.agent, **key).first()
            if stored is None:
                blob_restore(blob=blob, times=self._automatic_times(ConsolidatedMemory, row))
                self._defer_cursor(ConsolidatedMemory, blob, row)
                stored = blob
                self.report.add("blobs", "added")
            elif stored.content == blob.content:
                self.report.add("blobs", "existing")
            else:
                # The target already has its own blob for this scope: the exported one becomes its newest version
                # (the target's stays as a past version); the export's past versions cannot be numbered in.
                self.conflicting_blobs.add(row["id"])
                stored = consolidated_memory_replace(
                    agent=self.agent,
                    scope=blob.scope,
                    user=blob.user,
                    session=blob.session,
                    content=blob.content,
                    reason="imported from a native export",
                )
                self.report.add("blobs", "merged")
                self.report.warnings.append(
                    f"{blob.scope} blob of user {blob.user_id} / session {blob.session_id} already existed: "
                    "the imported text is its newest version; the export's past versions were not imported"
                )
            self.ids[ConsolidatedMemory][row["id"]] = stored.pk

    def blob_version(self, rows: list[dict]) -> None:
        for row in rows:
            if row["fields"]["memory_id"] in self.conflicting_blobs:
                self.report.add("blob versions", "invalid")
                continue
            version = self._instance(ConsolidatedMemoryVersion, row)
            if ConsolidatedMemoryVersion.objects.filter(memory_id=version.memory_id, version=version.version).exists():
                self.report.add("blob versions", "existing")
                continue
            blob_version_restore(version=version, times=self._automatic_times(ConsolidatedMemoryVersion, row))
            self.report.add("blob versions", "added")

    def reflection(self, rows: list[dict]) -> None:
        for row in rows:
            reflection = self._instance(Reflection, row)
            key = {"scope": reflection.scope, "user_id": reflection.user_id, "session_id": reflection.session_id}
            stored = Reflection.objects.filter(agent=self.agent, content=reflection.content, **key).first()
            if stored is not None:
                self.report.add("reflections", "existing")
            else:
                reflection_restore(reflection=reflection, times=self._automatic_times(Reflection, row))
                self.report.add("reflections", "added")
                stored = reflection
            self.ids[Reflection][row["id"]] = stored.pk

    def finish(self) -> None:
        """References that pointed forward (superseded_by, merged_into) or at message ids (cursors), now that all rows
        exist; the counters of existing sessions that received messages (increments: an append meanwhile keeps its
        own)."""
        for session_id, (messages, tokens) in sorted(self.added_to_session.items()):
            session_counters_add(session_id=session_id, messages=messages, tokens=tokens)
        for fact_id, exported_target in self.deferred_supersessions:
            target = self.ids[Fact].get(exported_target)
            if target is not None:
                fact_supersession_restore(fact_id=fact_id, superseded_by_id=target)
        for entity_id, exported_target in self.deferred_merges:
            target = self.ids[Entity].get(exported_target)
            if target is not None:
                entity_merge_restore(entity_id=entity_id, merged_into_id=target)
        exported_message_ids = sorted(self.ids[Message])
        for model, pk, exported_cursor in self.deferred_cursors:
            covered = [old for old in exported_message_ids if old <= exported_cursor]
            if not covered:
                continue
            if model is Session:
                session_cursor_restore(session_id=pk, formed_through_message_id=self.ids[Message][covered[-1]])
            else:
                blob_cursor_restore(blob_id=pk, summarized_through_message_id=self.ids[Message][covered[-1]])


def _rows(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as error:
                raise ImportFormatError(f"{path.name}, line {number}: not JSON ({error.msg})") from error


def native_import(
    *,
    path: Path,
    agent_external_id: str,
    dry_run: bool = False,
    embed_messages_here: bool = False,
    on_progress: ProgressCallback | None = None,
) -> ImportReport:
    """Import an export_memories file into the agent (created with the exported settings if missing). Facts are
    embedded here; messages by the workers, as at ingestion, unless `embed_messages_here`."""
    if not path.is_file():
        raise ImportFormatError(f"{path} is not a file")
    progress: Callable[[str, int, int], None] = on_progress or (lambda stage, done, total: None)
    with path.open(encoding="utf-8") as lines:
        first_line = lines.readline()
    try:
        header = json.loads(first_line)
    except json.JSONDecodeError:
        header = None
    if not isinstance(header, dict) or header.get("kind") != "export" or header.get("format") != FORMAT_NAME:
        raise ImportFormatError(f"{path.name}: not an export_memories file (no '{FORMAT_NAME}' header line)")
    if header.get("version") != FORMAT_VERSION:
        raise ImportFormatError(
            f"{path.name}: export format version {header.get('version')}, expected {FORMAT_VERSION}"
        )
    rows = _rows(path)
    next(rows)
    report = ImportReport()
    with transaction.atomic() if dry_run else nullcontext():
        agent_settings = {
            field.attname: parsed_value(field, header["agent"]["settings"][field.attname])
            for field in stored_fields(Agent)
            if field.attname in header["agent"]["settings"]
        }
        agent, created = Agent.objects.get_or_create(external_id=agent_external_id, defaults=agent_settings)
        report.agents.append(agent.external_id)
        report.add("agents", "added" if created else "existing")
        importer = _NativeImport(
            agent=agent,
            report=report,
            embed=not dry_run,
            embed_messages_here=embed_messages_here,
            on_progress=progress,
        )
        order = list(KINDS)
        current = ""  # the kind of the rows in the batch ("" before the first row)
        batch: list[dict] = []
        done = 0
        for row in rows:
            kind = row.get("kind")
            if kind not in KINDS:
                raise ImportFormatError(f"{path.name}: unknown row kind {kind!r}")
            if current and order.index(kind) < order.index(current):
                raise ImportFormatError(
                    f"{path.name}: {kind} rows after {current} rows; rows must come in export order"
                )
            if kind != current or len(batch) >= BATCH_SIZE:
                if batch:
                    getattr(importer, current)(batch)
                    done += len(batch)
                    progress(f"{current} rows", done, 0)
                current, batch = kind, []
            batch.append(row)
        if batch:
            getattr(importer, current)(batch)
        importer.finish()
        if dry_run:
            transaction.set_rollback(True)
    return report
