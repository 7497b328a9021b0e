"""Re-embedding into another embedding space while search keeps serving the active one.

Order of work (docs/operations/reference.md): fill the new space in batches (resumable: only what it lacks), build the
per-agent HNSW indexes its statistics call for, concurrently, catch up on rows written meanwhile, switch the active
space in one transaction, wait for in-flight searches of the old space, then move what was still written to the old
space and drop its rows and indexes. Reads never see a half-filled space: they use the active one until the switch."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db.models import Exists, OuterRef, QuerySet

from conversations.models import Message, MessageEmbedding
from conversations.services.message_embeddings import messages_embed_missing
from core.embeddings.providers import build_embedding_provider
from core.embeddings.spaces import embedding_space_activate, embedding_space_active, embedding_space_rebuild_start
from core.models import EmbeddingRecord, EmbeddingSpace
from facts.models import Fact, FactEmbedding
from facts.services.facts import facts_embed_missing
from facts.services.vector_indexes import fact_vector_indexes_drop, fact_vector_indexes_maintain


@dataclass(frozen=True)
class ReembedProgress:
    kind: str
    done: int
    total: int
    elapsed_seconds: float

    @property
    def rate(self) -> float:
        return self.done / self.elapsed_seconds if self.elapsed_seconds > 0 else 0.0

    @property
    def eta_seconds(self) -> float | None:
        return (self.total - self.done) / self.rate if self.rate > 0 else None


@dataclass
class ReembedReport:
    source: EmbeddingSpace
    target: EmbeddingSpace
    embedded: dict[str, int] = field(default_factory=dict)
    caught_up: dict[str, int] = field(default_factory=dict)
    moved_after_switch: dict[str, int] = field(default_factory=dict)
    dropped_rows: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class _RecordKind:
    """A table of vectors, the records it embeds, and which records belong in a new space: every fact version
    (all are embedded when written), and the messages that had a vector in the old space (message embedding is
    optional per deployment)."""

    name: str
    record_model: type[EmbeddingRecord]
    pending: Callable[[int, int], QuerySet]
    embed: Callable[[list[int], EmbeddingSpace], int]


def _facts_pending(source_id: int, target_id: int) -> QuerySet:
    return Fact.objects.filter(~Exists(FactEmbedding.objects.filter(fact=OuterRef("pk"), space_id=target_id)))


def _messages_pending(source_id: int, target_id: int) -> QuerySet:
    return Message.objects.filter(
        Exists(MessageEmbedding.objects.filter(message=OuterRef("pk"), space_id=source_id)),
        ~Exists(MessageEmbedding.objects.filter(message=OuterRef("pk"), space_id=target_id)),
    )


RECORD_KINDS = (
    _RecordKind(
        name="facts",
        record_model=FactEmbedding,
        pending=_facts_pending,
        embed=lambda ids, space: facts_embed_missing(fact_ids=ids, space=space),
    ),
    _RecordKind(
        name="messages",
        record_model=MessageEmbedding,
        pending=_messages_pending,
        embed=lambda ids, space: messages_embed_missing(message_ids=ids, space=space),
    ),
)


def reembed_pending_counts(*, provider: str, model: str, dimensions: int) -> dict[str, int]:
    """What a re-embedding into (provider, model, dimensions) would embed now, per kind; changes nothing."""
    source = embedding_space_active()
    name = build_embedding_provider(provider=provider, model=model, dimensions=dimensions).space_name
    target = EmbeddingSpace.objects.filter(name=name).first()
    if target is not None and target.pk == source.pk:
        return dict.fromkeys((kind.name for kind in RECORD_KINDS), 0)
    # A space that does not exist yet (no row has its id, and ids start at 1) lacks everything.
    target_id = target.pk if target is not None else 0
    return {kind.name: kind.pending(source.pk, target_id).count() for kind in RECORD_KINDS}


def _fill(
    *,
    kind: _RecordKind,
    source: EmbeddingSpace,
    target: EmbeddingSpace,
    batch_size: int,
    on_progress: Callable[[ReembedProgress], None] | None,
) -> int:
    """Embed what the target lacks, in batches by ascending id; each batch commits, so a crash loses one batch."""
    pending = kind.pending(source.pk, target.pk)
    total = pending.count()
    done, last_id, started = 0, 0, time.monotonic()
    while True:
        ids = list(pending.filter(pk__gt=last_id).order_by("pk").values_list("pk", flat=True)[:batch_size])
        if not ids:
            break
        done += kind.embed(ids, target)
        last_id = ids[-1]
        if on_progress is not None:
            on_progress(
                ReembedProgress(
                    kind=kind.name, done=done, total=max(total, done), elapsed_seconds=time.monotonic() - started
                )
            )
    return done


def _retired_spaces_drain(
    *, active: EmbeddingSpace, batch_size: int, on_progress: Callable[[ReembedProgress], None] | None
) -> tuple[dict[str, int], int]:
    """Move into the active space whatever was still written to retired spaces (a writer that picked the old space
    just before the switch), then delete the retired rows and indexes. Repeats until nothing is left."""
    moved = dict.fromkeys((kind.name for kind in RECORD_KINDS), 0)
    dropped = 0
    for retired in EmbeddingSpace.objects.filter(status=EmbeddingSpace.Status.RETIRED):
        fact_vector_indexes_drop(space=retired)
        while any(kind.record_model._default_manager.filter(space=retired).exists() for kind in RECORD_KINDS):
            for kind in RECORD_KINDS:
                moved[kind.name] += _fill(
                    kind=kind, source=retired, target=active, batch_size=batch_size, on_progress=on_progress
                )
                dropped += _rows_delete(model=kind.record_model, space=retired, batch_size=batch_size * 20)
    return moved, dropped


def _rows_delete(*, model: type[EmbeddingRecord], space: EmbeddingSpace, batch_size: int) -> int:
    """Delete in batches so no transaction holds many row locks."""
    deleted = 0
    while True:
        ids = list(model._default_manager.filter(space=space).values_list("pk", flat=True)[:batch_size])
        if not ids:
            return deleted
        deleted += model._default_manager.filter(pk__in=ids).delete()[0]


def embedding_space_reembed(
    *,
    provider: str,
    model: str,
    dimensions: int,
    batch_size: int,
    retire_grace_seconds: float,
    on_progress: Callable[[ReembedProgress], None] | None = None,
    on_phase: Callable[[str], None] | None = None,
) -> ReembedReport:
    """Switch reads and writes to the space of (provider, model, dimensions), filling it first. Running it again
    after a crash resumes where it stopped; running it for the space that is already active finishes a switch that
    was interrupted (drains retired spaces) and embeds nothing else."""
    started = time.monotonic()

    def phase(message: str) -> None:
        if on_phase is not None:
            on_phase(message)

    source = embedding_space_active()
    target_provider = build_embedding_provider(provider=provider, model=model, dimensions=dimensions)
    target, _ = EmbeddingSpace.objects.get_or_create(
        name=target_provider.space_name, defaults={"provider": provider, "model": model, "dimensions": dimensions}
    )
    report = ReembedReport(source=source, target=target)
    if target.pk != source.pk:
        if target.status == EmbeddingSpace.Status.RETIRED:
            embedding_space_rebuild_start(space=target)
        phase(f"embedding into {target.name} (reads stay on {source.name})")
        for kind in RECORD_KINDS:
            report.embedded[kind.name] = _fill(
                kind=kind, source=source, target=target, batch_size=batch_size, on_progress=on_progress
            )
        phase("building the new space's per-agent vector indexes")
        fact_vector_indexes_maintain(space=target)
        phase("catching up on rows written meanwhile")
        for kind in RECORD_KINDS:
            report.caught_up[kind.name] = _fill(
                kind=kind, source=source, target=target, batch_size=batch_size, on_progress=on_progress
            )
        embedding_space_activate(space=target)
        phase(f"switched: {target.name} is active; waiting {retire_grace_seconds:g}s for searches of the old space")
        time.sleep(retire_grace_seconds)
    phase("moving late writes and dropping retired spaces")
    report.moved_after_switch, report.dropped_rows = _retired_spaces_drain(
        active=target, batch_size=batch_size, on_progress=on_progress
    )
    report.seconds = time.monotonic() - started
    return report
