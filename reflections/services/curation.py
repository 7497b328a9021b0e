"""An operator's changes to consolidated blobs: consolidate a scope now, restore a past version. Editing a blob's
text is consolidated_memory_replace itself."""

from __future__ import annotations

from django.db import transaction

from core.exceptions import NotFoundError
from core.runtime.queueing import task_enqueue_safely
from reflections import task_names as reflections_tasks
from reflections.models import ConsolidatedMemory, ConsolidatedMemoryVersion
from reflections.services.consolidation import ScopeKey, consolidated_memory_replace


def scope_consolidation_request(*, key: ScopeKey) -> None:
    """Queue consolidation of the scope after commit, forced: the operator asked, whatever the buffer's size. The
    LLM call runs in the worker, never in the request."""
    transaction.on_commit(lambda: task_enqueue_safely(reflections_tasks.CONSOLIDATE_SCOPE, *key.as_task_args(), True))


@transaction.atomic
def consolidated_memory_restore(*, memory: ConsolidatedMemory, version: int, requested_by: str) -> ConsolidatedMemory:
    """Make a past version's text current again, as a new version (history only grows)."""
    past = ConsolidatedMemoryVersion.objects.filter(memory=memory, version=version).first()
    if past is None:
        raise NotFoundError(f"this blob has no past version {version}.", fields={"version": ["not found"]})
    return consolidated_memory_replace(
        agent=memory.agent,
        scope=memory.scope,
        user=memory.user,
        session=memory.session,
        content=past.content,
        reason=f"restored version {version} ({requested_by})",
        expected_version=memory.version,
        curated=True,
    )
