"""Facts in the admin, one module per model: facts.py (with filters.py and forms.py) and reference_documents.py.
Every write goes through facts.services."""

from facts.admin.facts import FactAdmin
from facts.admin.reference_documents import ReferenceChunkAdmin, ReferenceDocumentAdmin

__all__ = ["FactAdmin", "ReferenceChunkAdmin", "ReferenceDocumentAdmin"]
