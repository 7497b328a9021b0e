"""Server-side prepared statements for the raw statements that cost more to plan than to run (the graph walk of fact
search: a recursive statement planned in ~0.5 ms and run in ~0.2 ms at 10k facts).

Django's cursors bind parameters on the client (psycopg's ClientCursor), which never prepares, and Django opens its
connections with psycopg's prepare_threshold at None, which turns prepared statements off for every cursor, so that
a pooler in transaction mode keeps working. The settings give it a value (DATABASE_PREPARED_STATEMENTS, on by
default): only the cursors made here bind on the server and prepare, every other statement is sent as before. A
statement is prepared on its first run on a connection and kept with it (per thread, or in the pool with it);
PostgreSQL then plans it with the parameters' values for its first five runs and, when a plan for any value costs no
more, keeps that one plan and stops planning. Behind PgBouncer in transaction mode this needs PgBouncer 1.21 or
later with max_prepared_statements set (docs/scaling.md); with DATABASE_PREPARED_STATEMENTS off the statements run
unprepared, through Django's own cursor."""

from __future__ import annotations

from typing import Any, Self

import psycopg
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper


class _PreparingCursor(psycopg.Cursor):
    """Binds on the server and prepares every statement it runs (psycopg keeps up to 100 per connection)."""

    def execute(
        self, query: Any, params: Any = None, *, prepare: bool | None = None, binary: bool | None = None
    ) -> Self:
        return super().execute(query, params, prepare=True if prepare is None else prepare, binary=binary)


def prepared_cursor(connection: BaseDatabaseWrapper) -> CursorWrapper:
    """A cursor of `connection` whose statements run prepared, for use as Django's (`with ... as cursor`): the same
    connection and transaction, the same checks, query logging and error wrapping. Parameters are bound on the server,
    so each must have a type PostgreSQL can tell (a cast on the placeholder where a bare NULL or an int could be
    ambiguous). Django's own cursor when prepared statements are off."""
    cursor = connection.cursor()  # health check, connection, thread check: as for any cursor of Django's
    if connection.connection.prepare_threshold is None:
        return cursor
    cursor.close()
    preparing = _PreparingCursor(connection.connection)
    if isinstance(cursor, CursorDebugWrapper):  # Django logs queries (DEBUG, CaptureQueriesContext)
        return _LoggedPreparedCursorWrapper(preparing, connection)
    return CursorWrapper(preparing, connection)


class _LoggedPreparedCursorWrapper(CursorDebugWrapper):
    """Logs each statement with its parameters as Django's cursor does: psycopg keeps no text of a prepared run, which
    Django's log reads."""

    def execute(self, sql: Any, params: Any = None) -> Any:
        with self.debug_sql(self.db.ops.compose_sql(sql, params)):
            return CursorWrapper.execute(self, sql, params)
