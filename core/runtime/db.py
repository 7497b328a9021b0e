"""Database connections of processes that wait on the network most of the time."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.db import connection, models


def release_connection_while_waiting() -> None:
    """Before seconds without database work (an LLM call, a rate-limit wait): with a connection pool
    (DATABASE_POOL_MAX_SIZE), the thread's connection goes back to the pool, so that a few connections serve many
    threads; the next query takes one again. Without a pool, or inside a transaction, the connection is kept."""
    if connection.settings_dict.get("OPTIONS", {}).get("pool") and not connection.in_atomic_block:
        connection.close()


def automatic_times_restore(*, objs: Sequence[models.Model], times: Sequence[dict[str, datetime]]) -> None:
    """Rows written back from an export: auto_now and auto_now_add fields took the time of the insert; set them to
    the exported times (`times[i]`: field name -> time, for objs[i]) in one UPDATE per model."""
    fields = sorted({name for row_times in times for name in row_times})
    if not objs or not fields:
        return
    for obj, row_times in zip(objs, times, strict=True):
        for name, value in row_times.items():
            setattr(obj, name, value)
    type(objs[0])._default_manager.bulk_update(objs, fields)
