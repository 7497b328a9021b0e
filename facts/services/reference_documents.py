"""Reference documents: texts an agent always has available. They are split into chunks and embedded, and a newly
extracted fact that only restates one (its words appear in a chunk, or a chunk is at least
REFERENCE_RESTATEMENT_SIMILARITY similar) is not stored as memory: the agent already has it."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

import numpy as np
from django.conf import settings
from django.db import transaction
from pgvector.django import CosineDistance

from agents.models import Agent
from core.embeddings.spaces import embedding_expression, embedding_provider_for_space, embedding_space_active
from core.exceptions import ApplicationError
from core.models import EmbeddingSpace
from core.runtime.queueing import task_enqueue_safely
from facts import task_names as facts_tasks
from facts.models import ReferenceChunk, ReferenceChunkEmbedding, ReferenceDocument

CHUNK_CHARS = 800
_NON_WORD = re.compile(r"[^\w]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def reference_text_normalize(text: str) -> str:
    """Lower case, words only, single spaces: what the substring check compares."""
    return " ".join(_NON_WORD.sub(" ", text.lower()).split())


def reference_text_chunks(text: str) -> list[str]:
    """Paragraphs packed up to CHUNK_CHARS; a longer paragraph is cut at sentence ends."""
    pieces: list[str] = []
    for paragraph in (p.strip() for p in re.split(r"\n\s*\n", text)):
        if not paragraph:
            continue
        pieces.extend(_SENTENCE_END.split(paragraph) if len(paragraph) > CHUNK_CHARS else [paragraph])
    chunks: list[str] = []
    for piece in pieces:
        if chunks and len(chunks[-1]) + len(piece) + 1 <= CHUNK_CHARS:
            chunks[-1] = f"{chunks[-1]}\n{piece}"
        else:
            chunks.append(piece[: CHUNK_CHARS * 4])
    return chunks


@transaction.atomic
def reference_document_create(
    *, agent: Agent, title: str, content: str, metadata: dict | None = None
) -> tuple[ReferenceDocument, bool]:
    """Store and chunk a document (embedding is queued after commit). The same text twice is stored once:
    returns the document and whether it was created."""
    title, content = title.strip(), content.strip()
    if not title:
        raise ApplicationError("title must not be empty.", fields={"title": ["empty"]})
    if not content:
        raise ApplicationError("content must not be empty.", fields={"content": ["empty"]})
    content_hash = hashlib.sha256(content.encode()).hexdigest()
    existing = ReferenceDocument.objects.filter(agent=agent, content_hash=content_hash).first()
    if existing is not None:
        return existing, False
    document = ReferenceDocument.objects.create(
        agent=agent, title=title, content=content, content_hash=content_hash, metadata=metadata or {}
    )
    chunks = ReferenceChunk.objects.bulk_create(
        [
            ReferenceChunk(document=document, index=index, content=text, normalized=reference_text_normalize(text))
            for index, text in enumerate(reference_text_chunks(content))
        ]
    )
    chunk_ids = [chunk.pk for chunk in chunks]
    transaction.on_commit(lambda: task_enqueue_safely(facts_tasks.EMBED_REFERENCE_CHUNKS, chunk_ids))
    return document, True


def reference_document_delete(*, document: ReferenceDocument) -> None:
    document.delete()


def reference_chunks_embed_missing(*, chunk_ids: Iterable[int], space: EmbeddingSpace | None = None) -> int:
    space = space or embedding_space_active()
    chunks = list(
        ReferenceChunk.objects.filter(pk__in=list(chunk_ids))
        .exclude(embeddings__space=space)
        .select_related("document")
        .order_by("pk")
    )
    if not chunks:
        return 0
    vectors = embedding_provider_for_space(space=space).embed([chunk.content for chunk in chunks])
    ReferenceChunkEmbedding.objects.bulk_create(
        [
            ReferenceChunkEmbedding(chunk=chunk, space=space, agent_id=chunk.document.agent_id, embedding=vector)
            for chunk, vector in zip(chunks, vectors, strict=True)
        ],
        ignore_conflicts=True,
    )
    return len(chunks)


def fact_restates_reference(
    *, agent: Agent, content: str, vector: np.ndarray, space: EmbeddingSpace | None = None
) -> bool:
    """Whether the statement is already in one of the agent's reference documents."""
    normalized = reference_text_normalize(content)
    if normalized and ReferenceChunk.objects.filter(document__agent=agent, normalized__contains=normalized).exists():
        return True
    space = space or embedding_space_active()
    nearest = (
        ReferenceChunkEmbedding.objects.filter(space=space, agent=agent)
        .annotate(distance=CosineDistance(embedding_expression(space=space), vector))
        .order_by("distance")
        .values_list("distance", flat=True)
        .first()
    )
    return nearest is not None and 1 - nearest >= settings.REFERENCE_RESTATEMENT_SIMILARITY


def facts_restating_reference(
    *, agent: Agent, contents: list[str], vectors: list[np.ndarray], space: EmbeddingSpace
) -> list[bool]:
    """fact_restates_reference for each statement; most agents have no reference documents, and one query
    finding none answers for every statement."""
    if not ReferenceChunk.objects.filter(document__agent=agent).exists():
        return [False] * len(contents)
    return [
        fact_restates_reference(agent=agent, content=content, vector=vector, space=space)
        for content, vector in zip(contents, vectors, strict=True)
    ]
