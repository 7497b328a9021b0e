"""Facts in the admin, one module per model: facts.py (with filters.py and forms.py), entities.py (with
entity_graph.py, the SVG of an entity's relations), relations.py and reference_documents.py. Every write goes through
facts.services."""

from facts.admin.entities import EntityAdmin
from facts.admin.facts import FactAdmin
from facts.admin.reference_documents import ReferenceChunkAdmin, ReferenceDocumentAdmin
from facts.admin.relations import RelationAdmin

__all__ = ["EntityAdmin", "FactAdmin", "ReferenceChunkAdmin", "ReferenceDocumentAdmin", "RelationAdmin"]
