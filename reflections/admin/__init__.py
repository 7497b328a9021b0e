"""Reflections in the admin, one module per model: reflections.py (the buffer), blobs.py (consolidated blobs and
their past versions), jobs.py (consolidation jobs)."""

from reflections.admin.blobs import ConsolidatedMemoryAdmin, ConsolidatedMemoryVersionAdmin
from reflections.admin.jobs import ConsolidationJobAdmin
from reflections.admin.reflections import ReflectionAdmin

__all__ = ["ConsolidatedMemoryAdmin", "ConsolidatedMemoryVersionAdmin", "ConsolidationJobAdmin", "ReflectionAdmin"]
