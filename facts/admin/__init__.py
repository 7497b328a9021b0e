"""Facts in the admin, one module per model: facts.py (with filters.py and forms.py), reference_documents.py and
graph.py (entities and relations).
Every write goes through facts.services."""

from facts.admin.facts import FactAdmin
from facts.admin.graph import EntityAdmin, RelationAdmin
from facts.admin.reference_documents import ReferenceChunkAdmin, ReferenceDocumentAdmin

__all__ = ["EntityAdmin", "FactAdmin", "ReferenceChunkAdmin", "ReferenceDocumentAdmin", "RelationAdmin"]
