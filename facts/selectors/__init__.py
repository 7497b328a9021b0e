"""Reads of facts."""

from facts.selectors.embeddings import fact_embeddings_nearest
from facts.selectors.search import FactHit, SearchMode, facts_search

__all__ = ["FactHit", "SearchMode", "fact_embeddings_nearest", "facts_search"]
