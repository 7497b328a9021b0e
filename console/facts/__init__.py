"""Facts in the admin, one module per model: facts.py (with filters.py and forms.py), entities.py (with
entity_graph.py, the SVG of an entity's relations), relations.py, reference_documents.py and feedback.py. Every write
goes through facts.services."""

from console.facts.entities import EntityAdmin
from console.facts.facts import FactAdmin
from console.facts.feedback import FactFeedbackAdmin
from console.facts.reference_documents import ReferenceChunkAdmin, ReferenceDocumentAdmin
from console.facts.relations import RelationAdmin

__all__ = [
    "EntityAdmin",
    "FactAdmin",
    "FactFeedbackAdmin",
    "ReferenceChunkAdmin",
    "ReferenceDocumentAdmin",
    "RelationAdmin",
]
