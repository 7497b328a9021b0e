"""The facts app's models: fact versions and their search rows, reference documents (facts.py), and the entity graph
formed with the facts (graph.py)."""

from facts.models.facts import (
    CURATED_WRITERS,
    PROFILE_KEY_VALIDATOR,
    Fact,
    FactEmbedding,
    FactScope,
    FactWriter,
    ReferenceChunk,
    ReferenceChunkEmbedding,
    ReferenceDocument,
)
from facts.models.graph import Entity, EntityType, Relation

__all__ = [
    "CURATED_WRITERS",
    "PROFILE_KEY_VALIDATOR",
    "Entity",
    "EntityType",
    "Fact",
    "FactEmbedding",
    "FactScope",
    "FactWriter",
    "ReferenceChunk",
    "ReferenceChunkEmbedding",
    "ReferenceDocument",
    "Relation",
]
