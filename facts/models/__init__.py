"""The facts app's models: fact versions and their search rows, reference documents (facts.py), the entity graph
formed with the facts (graph.py), and feedback on facts (feedback.py)."""

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
from facts.models.feedback import NEGATIVE_RATINGS, FactFeedback, FeedbackOutcome, FeedbackRating
from facts.models.graph import Entity, EntityType, Relation

__all__ = [
    "CURATED_WRITERS",
    "NEGATIVE_RATINGS",
    "PROFILE_KEY_VALIDATOR",
    "Entity",
    "EntityType",
    "Fact",
    "FactEmbedding",
    "FactFeedback",
    "FactScope",
    "FactWriter",
    "FeedbackOutcome",
    "FeedbackRating",
    "ReferenceChunk",
    "ReferenceChunkEmbedding",
    "ReferenceDocument",
    "Relation",
]
