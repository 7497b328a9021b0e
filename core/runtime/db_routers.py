"""Search reads on a read replica (docs/scaling.md): when DATABASE_REPLICA_URL is set, the statements of fact and
message search run on the `replica` database, a streaming-replication standby of the primary; everything else,
writes and the reads that must see them, stays on `default`.

Search marks its reads with `search_reads()`; the router sends ORM reads made inside it to the replica, and the raw
search statements take `search_connection()`. A search inside a transaction on the primary stays on the primary: a
caller that has just written in that transaction must find what it wrote. Outside one, a search may miss what was
committed in the last milliseconds (the replica's replay lag, shown by `pg_stat_replication`): memory that formed in
the background a moment ago is found by the next search instead."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Model

REPLICA_DB_ALIAS = "replica"
_searching: ContextVar[bool] = ContextVar("search_reads", default=False)


def search_database_alias() -> str:
    """The database a search reads now: the replica when one is configured, this is a search, and no transaction
    is open on the primary."""
    if _searching.get() and settings.DATABASE_REPLICA_URL and not connection.in_atomic_block:
        return REPLICA_DB_ALIAS
    return DEFAULT_DB_ALIAS


def search_connection() -> BaseDatabaseWrapper:
    return connections[search_database_alias()]


@contextmanager
def search_reads() -> Iterator[None]:
    token = _searching.set(True)
    try:
        yield
    finally:
        _searching.reset(token)


class SearchReplicaRouter:
    """Reads inside `search_reads()` go to the replica (see search_database_alias); the replica is never written or
    migrated."""

    def db_for_read(self, model: type[Model], **hints: Any) -> str | None:
        alias = search_database_alias()
        return alias if alias == REPLICA_DB_ALIAS else None

    def db_for_write(self, model: type[Model], **hints: Any) -> str | None:
        return None

    def allow_relation(self, obj1: Model, obj2: Model, **hints: Any) -> bool | None:
        return True  # the replica holds the same rows as the primary

    def allow_migrate(self, db: str, app_label: str, model_name: str | None = None, **hints: Any) -> bool | None:
        return db != REPLICA_DB_ALIAS
