"""Blobs, their past versions and reflections of a native export written back as they were exported (portability's
lossless import), the caller having remapped their ids."""

from __future__ import annotations

from datetime import datetime

from core.runtime.db import automatic_times_restore
from reflections.models import ConsolidatedMemory, ConsolidatedMemoryVersion, Reflection


def blob_restore(*, blob: ConsolidatedMemory, times: dict[str, datetime]) -> ConsolidatedMemory:
    blob.save()
    automatic_times_restore(objs=[blob], times=[times])
    return blob


def blob_version_restore(*, version: ConsolidatedMemoryVersion, times: dict[str, datetime]) -> None:
    version.save()
    automatic_times_restore(objs=[version], times=[times])


def reflection_restore(*, reflection: Reflection, times: dict[str, datetime]) -> Reflection:
    reflection.save()
    automatic_times_restore(objs=[reflection], times=[times])
    return reflection


def blob_cursor_restore(*, blob_id: int, summarized_through_message_id: int) -> None:
    ConsolidatedMemory.objects.filter(pk=blob_id).update(summarized_through_message_id=summarized_through_message_id)
