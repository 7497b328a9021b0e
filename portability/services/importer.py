"""The import service: writes what a reader produced (records.py) into one agent's memory.

Idempotent and resumable: every record carries its original id, and a record already imported is recognised and
not written again (messages by their idempotency key `import:<format>:<original id>`, facts by the original id in
`metadata.import`, reflections and blob versions by their content), so running an import twice adds nothing and
re-running one that crashed continues where it stopped. Facts also skip what the scope already holds with the
same normalised content. Writes are committed per session and per batch of facts, each fact batch together with its
vectors in the active embedding space; messages are embedded in batches after they are stored, by the workers as at
ingestion (or here, on request).

Bulk writes stay identical to what the services produce one by one: token counts from core.llm.tokens, fact hashes and
normalisation from facts.services.facts, vectors in the active space with its own provider, reflections and blobs
through reflection_create and consolidated_memory_replace."""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from agents.models import Agent, EndUser
from agents.selectors.agent_settings import agent_thresholds
from conversations.models import Message, Session
from conversations.services.ingestion import (
    MessageInput,
    end_user_get_or_create,
    session_get_or_create,
    session_messages_import,
)
from conversations.services.message_embeddings import message_embedding_enqueue, messages_embed_missing
from core.embeddings.spaces import embedding_provider_for_space, embedding_space_active
from core.exceptions import ApplicationError
from core.llm.limits import text_cap, words_cap
from facts.models import Fact, FactWriter
from facts.services.categories import facts_values_canonical
from facts.services.facts import (
    NewFact,
    fact_content_hash,
    fact_content_normalize,
    fact_profile_set,
    fact_scopes_validate,
    facts_create_bulk,
)
from facts.services.graph_extraction import facts_graph_extract
from facts.world_time import UNKNOWN_WORLD_TIME
from formation.services.formation_cursor import session_cursor_past_imported
from portability.records import ImportedBlob, ImportedFact, ImportedSession, MemoryImport
from reflections.models import ConsolidatedMemory, ConsolidatedMemoryVersion, Reflection
from reflections.services.consolidation import consolidated_memory_replace
from reflections.services.reflections import reflection_create, scope_key

IDEMPOTENCY_KEY_MAX = 200

ProgressCallback = Callable[[str, int, int], None]


@dataclass
class ImportReport:
    """Per kind: `added`, `existing` (imported before: a re-run), `duplicate` (the scope already holds the same
    content), `invalid` (empty content, unknown scope), `too long` (over the kind's character limit, as the API would
    refuse it); `skipped` counts source records the format does not map."""

    agents: list[str] = field(default_factory=list)
    counts: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    skipped: Counter = field(default_factory=Counter)
    embedded: Counter = field(default_factory=Counter)
    queued: Counter = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)

    def add(self, kind: str, outcome: str, n: int = 1) -> None:
        if n:
            self.counts[kind][outcome] += n


def message_import_key(*, format: str, original_id: str) -> str:
    key = f"import:{format}:{original_id}"
    if len(key) <= IDEMPOTENCY_KEY_MAX:
        return key
    return f"import:{format}:sha256:{hashlib.sha256(original_id.encode()).hexdigest()}"


def _provenance(data: MemoryImport, original_id: str) -> dict:
    return {"format": data.format, "source": data.source, "original_id": original_id}


def _scope_complete(*, scope: str, user: EndUser | None, session: Session | None) -> bool:
    return scope == "agent" or (scope == "user" and user is not None) or (scope == "session" and session is not None)


def _chunks(items: list, size: int) -> Iterable[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class _AgentImport:
    """One MemoryImport into one agent. Keeps the maps from external and original ids to rows as it goes."""

    def __init__(
        self,
        *,
        data: MemoryImport,
        report: ImportReport,
        embed: bool,
        embed_messages_here: bool,
        leave_unformed: bool,
        batch_size: int,
        on_progress: ProgressCallback | None,
    ) -> None:
        self.data = data
        self.report = report
        self.embed = embed
        self.embed_messages_here = embed_messages_here
        self.leave_unformed = leave_unformed
        self.batch_size = batch_size
        self.on_progress = on_progress or (lambda stage, done, total: None)
        self.users: dict[str, EndUser] = {}
        self.sessions: dict[str, Session] = {}
        self.message_ids: dict[tuple[str, str], int] = {}

    def run(self) -> None:
        agent, created = Agent.objects.get_or_create(external_id=self.data.agent_external_id)
        self.agent = agent
        self.report.agents.append(agent.external_id)
        self.report.add("agents", "added" if created else "existing")
        self.report.skipped.update(self.data.skipped)
        self._sessions()
        self._facts()
        self._reflections()
        self._blobs()

    # --- users and sessions ---------------------------------------------------------------------------------------

    def _user(self, external_id: str) -> EndUser:
        if external_id not in self.users:
            existed = EndUser.objects.filter(agent=self.agent, external_id=external_id).exists()
            self.users[external_id] = end_user_get_or_create(agent=self.agent, external_id=external_id)
            self.report.add("users", "existing" if existed else "added")
        return self.users[external_id]

    def _session(self, external_id: str) -> Session | None:
        if external_id not in self.sessions:
            session = Session.objects.filter(agent=self.agent, external_id=external_id).first()
            if session is None:
                return None
            self.sessions[external_id] = session
        return self.sessions[external_id]

    def _sessions(self) -> None:
        total = self.embedding_total = sum(len(session.messages) for session in self.data.sessions)
        done = self.embedding_done = 0
        pending_embedding: list[int] = []
        for imported in self.data.sessions:
            self._user(imported.user_external_id)
            stored_ids = self._session_messages_store(imported)
            pending_embedding += stored_ids
            done += len(imported.messages)
            self.on_progress("messages stored", done, total)
            while len(pending_embedding) >= self.batch_size:
                self._messages_embed(pending_embedding[: self.batch_size])
                pending_embedding = pending_embedding[self.batch_size :]
        if pending_embedding:
            self._messages_embed(pending_embedding)

    def _messages_embed(self, message_ids: list[int]) -> None:
        """Here, or as ingestion does it: a task per batch for the workers (each skips what is embedded already)."""
        if not self.embed:
            return
        if self.embed_messages_here:
            self.report.embedded["messages"] += messages_embed_missing(message_ids=message_ids)
            self.embedding_done += len(message_ids)
            self.on_progress("messages embedded", self.embedding_done, self.embedding_total)
        else:
            space = embedding_space_active()
            missing = list(
                Message.objects.filter(pk__in=message_ids).exclude(embeddings__space=space).values_list("pk", flat=True)
            )
            if missing:
                message_embedding_enqueue(message_ids=missing)
                self.report.queued["message embeddings"] += len(missing)

    @transaction.atomic
    def _session_messages_store(self, imported: ImportedSession) -> list[int]:
        """Store the session's new messages as session_append_messages would (token counts, counters, idempotency
        keys), without queueing formation: imported conversations count as formed unless --leave-unformed.
        Returns the ids of its messages, new and already imported, for embedding (which skips embedded ones)."""
        existed = Session.objects.filter(agent=self.agent, external_id=imported.external_id).exists()
        try:
            session = session_get_or_create(
                agent=self.agent,
                user_external_id=imported.user_external_id,
                session_external_id=imported.external_id,
            )
        except ApplicationError as error:
            self.report.warnings.append(f"session {imported.external_id}: {error.message} Its records are skipped.")
            self.report.add("sessions", "invalid")
            return []
        session = Session.objects.select_for_update().get(pk=session.pk)
        self.sessions[imported.external_id] = session
        self.report.add("sessions", "existing" if existed else "added")

        keyed = [
            (message_import_key(format=self.data.format, original_id=message.original_id), message)
            for message in imported.messages
        ]
        stored: dict[str | None, int | None] = dict(
            Message.objects.filter(session=session, idempotency_key__in=[key for key, _ in keyed]).values_list(
                "idempotency_key", "pk"
            )
        )
        self.report.add("messages", "existing", len(stored))
        new = []
        for key, message in keyed:
            if key in stored:
                continue
            if not message.content.strip() or message.role not in Message.Role.values:
                self.report.add("messages", "invalid")
                continue
            if len(message.content) > settings.MESSAGE_MAX_CHARS:
                self.report.add("messages", "too long")
                continue
            stored[key] = None  # a repeated original id within the file is stored once
            new.append((key, message))
        created = session_messages_import(
            session=session,
            messages=[
                MessageInput(
                    role=message.role,
                    content=message.content,
                    created_at=message.created_at or timezone.now(),
                    idempotency_key=key,
                    metadata={**message.metadata, "import": _provenance(self.data, message.original_id)},
                )
                for key, message in new
            ],
            new_session=not existed,
        )
        if not self.leave_unformed:
            session_cursor_past_imported(session=session, imported=created)
        self.report.add("messages", "added", len(created))
        for row in created:
            stored[row.idempotency_key] = row.pk
        for key, message in keyed:
            if pk := stored.get(key):
                self.message_ids[(imported.external_id, message.original_id)] = pk
        return [pk for pk in stored.values() if pk]

    # --- facts ----------------------------------------------------------------------------------------------------

    def _facts(self) -> None:
        total = len(self.data.facts)
        for number, batch in enumerate(_chunks(self.data.facts, self.batch_size)):
            self._facts_batch_store(batch)
            self.on_progress("facts", min((number + 1) * self.batch_size, total), total)

    def _facts_batch_new(self, batch: list[ImportedFact]) -> list[tuple[ImportedFact, str, EndUser | None, list[str]]]:
        """The facts of the batch that are neither imported before nor already held by their scope."""
        already_imported = set(
            Fact.objects.filter(
                agent=self.agent,
                metadata__import__format=self.data.format,
                metadata__import__original_id__in=[fact.original_id for fact in batch],
            ).values_list("metadata__import__original_id", flat=True)
        )
        candidates = []
        for fact in batch:
            if fact.original_id in already_imported:
                self.report.add("facts", "existing")
                continue
            content = fact_content_normalize(fact.content)
            user = self._user(fact.user_external_id) if fact.user_external_id else None
            try:
                scopes = fact_scopes_validate(scopes=fact.scopes, user=user)
            except ApplicationError:
                self.report.add("facts", "invalid")
                continue
            if not content:
                self.report.add("facts", "invalid")
                continue
            if len(content) > settings.FACT_MAX_CHARS:
                self.report.add("facts", "too long")
                continue
            owner = user if "user" in scopes else None
            candidates.append((fact, content, owner, scopes))
        held: set[tuple[int | None, str]] = set(
            Fact.objects.filter(
                agent=self.agent,
                valid_to__isnull=True,
                content_hash__in=[fact_content_hash(content) for _, content, _, _ in candidates],
            ).values_list("user_id", "content_hash")
        )
        new = []
        for fact, content, owner, scopes in candidates:
            key = (owner.pk if owner else None, fact_content_hash(content))
            if key in held:
                self.report.add("facts", "duplicate")
                continue
            held.add(key)
            new.append((fact, content, owner, scopes))
        return new

    def _facts_batch_store(self, batch: list[ImportedFact]) -> None:
        new = self._facts_batch_new(batch)
        keyed = [(fact, content, owner) for fact, content, owner, _ in new if fact.key and owner is not None]
        new = [item for item in new if not (item[0].key and item[2] is not None)]
        for fact, content, owner in sorted(keyed, key=lambda item: item[0].valid_from or timezone.now()):
            self._profile_fact_store(fact=fact, content=content, owner=owner)
        if not new:
            return
        space = embedding_space_active()
        contents = [content for _, content, _, _ in new]
        vectors = embedding_provider_for_space(space=space).embed(contents) if self.embed else None
        with transaction.atomic():
            facts = facts_create_bulk(
                agent=self.agent,
                new_facts=[
                    NewFact(
                        user=owner,
                        scopes=scopes,
                        content=content,
                        embedding=vectors[index] if vectors is not None else None,
                        source_message_ids=[
                            self.message_ids[source] for source in fact.source_messages if source in self.message_ids
                        ],
                        valid_from=fact.valid_from,
                        source_session=self._session(fact.source_session) if fact.source_session else None,
                        tags=fact.tags,
                        metadata={**fact.metadata, "import": _provenance(self.data, fact.original_id)},
                        world_time=fact.world_time or UNKNOWN_WORLD_TIME,
                    )
                    for index, (fact, content, owner, scopes) in enumerate(new)
                ],
                change_reason=f"imported from {self.data.format}",
                source_session=None,
                space=space,
                written_by=FactWriter.IMPORT,
            )
        if vectors is not None:
            self.report.embedded["facts"] += len(facts)
        self.report.add("facts", "added", len(facts))
        # Filed by the offline lexicons as they were written; their values made canonical for their person.
        facts_values_canonical(facts)
        # Imported facts join the graph as formed ones do; the import is a batch job: it parses them itself.
        self.report.add("relations", "written", facts_graph_extract(fact_ids=[fact.pk for fact in facts]))

    def _profile_fact_store(self, *, fact: ImportedFact, content: str, owner: EndUser) -> None:
        """A key/value memory becomes the user's profile attribute: a later value supersedes an earlier one."""
        try:
            _, outcome = fact_profile_set(
                agent=self.agent,
                user=owner,
                key=fact.key,
                content=content,
                value=fact.metadata.get("value"),
                metadata={**fact.metadata, "import": _provenance(self.data, fact.original_id)},
                change_reason=f"imported from {self.data.format}",
                written_by=FactWriter.IMPORT,
                world_time=fact.world_time or UNKNOWN_WORLD_TIME,
            )
        except ApplicationError:
            self.report.add("facts", "invalid")
            return
        self.report.add("facts", {"created": "added", "updated": "updated", "unchanged": "duplicate"}[outcome])
        if outcome != "unchanged":
            self.report.embedded["facts"] += 1

    # --- reflections and blobs ------------------------------------------------------------------------------------

    def _scope_owner(
        self, *, scope: str, user_external_id: str | None, session_external_id: str | None
    ) -> tuple[EndUser | None, Session | None]:
        user = self._user(user_external_id) if user_external_id and scope != "agent" else None
        session = self._session(session_external_id) if session_external_id and scope == "session" else None
        return user, session

    def _reflections(self) -> None:
        for reflection in self.data.reflections:
            user, session = self._scope_owner(
                scope=reflection.scope,
                user_external_id=reflection.user_external_id,
                session_external_id=reflection.session_external_id,
            )
            content = " ".join(reflection.content.split())
            if not content or not _scope_complete(scope=reflection.scope, user=user, session=session):
                self.report.add("reflections", "invalid")
                continue
            if len(content) > settings.REFLECTION_MAX_CHARS:
                self.report.add("reflections", "too long")
                continue
            key = scope_key(scope=reflection.scope, user=user, session=session)
            if Reflection.objects.filter(agent=self.agent, scope=reflection.scope, content=content, **key).exists():
                self.report.add("reflections", "existing")
                continue
            reflection_create(
                agent=self.agent,
                scope=reflection.scope,
                content=content,
                user=user,
                session=session,
                source=Reflection.Source.IMPORT,
                source_session=session,
                created_at=reflection.created_at,
            )
            self.report.add("reflections", "added")

    def _blobs(self) -> None:
        for blob in self.data.blobs:
            self._blob_store(blob)

    def _blob_store(self, blob: ImportedBlob) -> None:
        """Each version not yet held by the scope's blob (current or past) becomes its new current version, in order;
        the blob's history keeps what was there before."""
        user, session = self._scope_owner(
            scope=blob.scope, user_external_id=blob.user_external_id, session_external_id=blob.session_external_id
        )
        if not _scope_complete(scope=blob.scope, user=user, session=session):
            self.report.add("blob versions", "invalid", len(blob.versions))
            return
        key = scope_key(scope=blob.scope, user=user, session=session)
        memory = ConsolidatedMemory.objects.filter(agent=self.agent, scope=blob.scope, **key).first()
        held = set()
        if memory is not None:
            held = {
                memory.content,
                *ConsolidatedMemoryVersion.objects.filter(memory=memory).values_list("content", flat=True),
            }
        limit = agent_thresholds(agent=self.agent).blob_word_limit(blob.scope)
        # An imported session summary covers the imported conversation: the rolling summary is not due again for it.
        summarized_through = (
            Message.objects.filter(session=session).aggregate(last=Max("pk"))["last"] if session is not None else None
        )
        for number, text in enumerate(blob.versions, start=1):
            capped = text_cap(text=words_cap(text=text, limit=limit), chars=settings.BLOB_MAX_CHARS)
            if capped in held:
                self.report.add("blob versions", "existing")
                continue
            if capped != text.strip():
                self.report.warnings.append(
                    f"{blob.scope} blob {blob.original_id} version {number}: cut to the {limit}-word and "
                    f"{settings.BLOB_MAX_CHARS}-character limits ({len(text.split())} words, {len(text)} characters)"
                )
            consolidated_memory_replace(
                agent=self.agent,
                scope=blob.scope,
                user=user,
                session=session,
                content=text,
                reason=f"imported from {self.data.format} ({blob.original_id})"[:300],
                summarized_through_message_id=summarized_through,
            )
            held.add(capped)
            self.report.add("blob versions", "added")


def memories_import(
    *,
    imports: Iterable[MemoryImport],
    dry_run: bool = False,
    embed_messages_here: bool = False,
    leave_unformed: bool = False,
    batch_size: int = 256,
    on_progress: ProgressCallback | None = None,
) -> ImportReport:
    """Write each MemoryImport into its agent (created on first use). Facts are embedded here, with their batch;
    messages, as at ingestion, by the workers (one task per batch) unless `embed_messages_here`. A dry run performs
    the same writes without embedding and rolls them back, so its counts are exactly what a real run would do."""
    report = ImportReport()
    with transaction.atomic() if dry_run else nullcontext():
        for data in imports:
            _AgentImport(
                data=data,
                report=report,
                embed=not dry_run,
                embed_messages_here=embed_messages_here,
                leave_unformed=leave_unformed,
                batch_size=batch_size,
                on_progress=on_progress,
            ).run()
        if dry_run:
            transaction.set_rollback(True)
    return report
