"""Metrics and spans of the calls the service makes to its models: each LLM call of memory work, each call to the
embedding model. Called from core.llm.client and core.embeddings.providers."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from core.observability import tracing
from core.observability.metrics import (
    embedded_texts,
    embedding_duration,
    llm_call_duration,
    llm_calls,
    llm_tokens,
    metrics_enabled,
)

F = TypeVar("F", bound=Callable[..., Any])


def llm_call_observe(
    *, provider: str, purpose: str, outcome: str, prompt_tokens: int, completion_tokens: int, latency_ms: int
) -> None:
    """One recorded LLM call (every attempt, whatever its outcome)."""
    if not metrics_enabled():
        return
    llm_calls.labels(provider, purpose, outcome).inc()
    if prompt_tokens:
        llm_tokens.labels(provider, purpose, "prompt").inc(prompt_tokens)
    if completion_tokens:
        llm_tokens.labels(provider, purpose, "completion").inc(completion_tokens)
    if latency_ms:
        llm_call_duration.labels(provider, purpose).observe(latency_ms / 1000)


def embedding_call_observed(embed: F) -> F:
    """Wraps an EmbeddingProvider's `embed`: the call's time and text count, and its span."""

    @functools.wraps(embed)
    def observed(self: Any, texts: Sequence[str]) -> Any:
        if not texts:
            return embed(self, texts)
        started = time.perf_counter()
        attributes = {"embedding.provider": self.provider, "embedding.model": self.model, "embedding.texts": len(texts)}
        with tracing.span("embedding", **attributes):
            vectors = embed(self, texts)
        if metrics_enabled():
            embedding_duration.labels(self.provider).observe(time.perf_counter() - started)
            embedded_texts.labels(self.provider).inc(len(texts))
        return vectors

    return cast(F, observed)  # the wrapper has embed's signature


def embedding_query_observed(embed_query: F) -> F:
    """Wraps an EmbeddingProvider's own `embed_query` (one search query) as `embedding_call_observed` does `embed`."""
    observed_batch = embedding_call_observed(lambda self, texts: [embed_query(self, texts[0])])

    @functools.wraps(embed_query)
    def observed(self: Any, text: str) -> Any:
        return observed_batch(self, [text])[0]

    return cast(F, observed)  # the wrapper has embed_query's signature
