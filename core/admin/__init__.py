"""Core's models in the admin, one module per model: embedding spaces, corpus statistics,
sensitive-data findings, LLM calls (with the usage page)."""

from core.admin.corpus_statistics import CorpusStatisticsAdmin, CorpusStatisticsChangeAdmin
from core.admin.embedding_spaces import EmbeddingSpaceAdmin
from core.admin.llm_calls import LLMCallAdmin
from core.admin.sensitive_data import SensitiveDataFindingAdmin

__all__ = [
    "CorpusStatisticsAdmin",
    "CorpusStatisticsChangeAdmin",
    "EmbeddingSpaceAdmin",
    "LLMCallAdmin",
    "SensitiveDataFindingAdmin",
]
