"""Database connections of processes that wait on the network most of the time."""

from __future__ import annotations

from django.db import connection


def release_connection_while_waiting() -> None:
    """Before seconds without database work (an LLM call, a rate-limit wait): with a connection pool
    (DATABASE_POOL_MAX_SIZE), the thread's connection goes back to the pool, so that a few connections serve many
    threads; the next query takes one again. Without a pool, or inside a transaction, the connection is kept."""
    if connection.settings_dict.get("OPTIONS", {}).get("pool") and not connection.in_atomic_block:
        connection.close()
