"""Reflections in the admin, one module per model: reflections.py (the buffer), blobs.py (consolidated blobs and
their past versions), jobs.py (consolidation jobs)."""

from console.reflections.blobs import ConsolidatedMemoryAdmin, ConsolidatedMemoryVersionAdmin
from console.reflections.jobs import ConsolidationJobAdmin
from console.reflections.reflections import ReflectionAdmin

__all__ = ["ConsolidatedMemoryAdmin", "ConsolidatedMemoryVersionAdmin", "ConsolidationJobAdmin", "ReflectionAdmin"]
