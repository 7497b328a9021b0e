"""Core's models in the admin, one module per model: embedding spaces, corpus statistics,
sensitive-data findings, LLM calls (with the usage page)."""

from console.core.corpus_statistics import CorpusStatisticsAdmin, CorpusStatisticsChangeAdmin
from console.core.embedding_spaces import EmbeddingSpaceAdmin
from console.core.llm_calls import LLMCallAdmin
from console.core.sensitive_data import SensitiveDataFindingAdmin

__all__ = [
    "CorpusStatisticsAdmin",
    "CorpusStatisticsChangeAdmin",
    "EmbeddingSpaceAdmin",
    "LLMCallAdmin",
    "SensitiveDataFindingAdmin",
]
