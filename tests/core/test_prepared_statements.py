"""core/runtime/prepared_statements.py under the test database's settings (those of every deployment unless
DATABASE_PREPARED_STATEMENTS is false): its cursors prepare, Django's never do, and its statements are logged and
their errors wrapped as Django's are."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import DatabaseError, connection
from django.test.utils import CaptureQueriesContext

from core.runtime.prepared_statements import prepared_cursor

STATEMENT = "SELECT %s::bigint + 1, %s::text"


def _prepared(statement: str) -> list[tuple[int, int]]:
    """(generic plans, custom plans) of this connection's prepared statements with that text."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = %s",
            [statement.replace("%s", "$1", 1).replace("%s", "$2", 1)],
        )
        return cursor.fetchall()


@pytest.mark.django_db
def test_the_settings_let_psycopg_prepare():
    connection.ensure_connection()
    assert connection.settings_dict["OPTIONS"]["prepare_threshold"] is not None
    assert connection.connection.prepare_threshold is not None


@pytest.mark.django_db
def test_a_statement_is_prepared_on_its_first_run_and_reused():
    for value in (1, 41):
        with prepared_cursor(connection) as cursor:
            cursor.execute(STATEMENT, [value, "x"])
            assert cursor.fetchone() == (value + 1, "x")

    assert [sum(plans) for plans in _prepared(STATEMENT)] == [2]  # one statement, run twice


@pytest.mark.django_db
def test_djangos_cursor_never_prepares():
    for value in range(8):
        with connection.cursor() as cursor:
            cursor.execute(STATEMENT, [value, "x"])

    assert _prepared(STATEMENT) == []


@pytest.mark.django_db
def test_with_prepared_statements_off_the_statement_runs_unprepared():
    connection.ensure_connection()
    threshold = connection.connection.prepare_threshold
    connection.connection.prepare_threshold = None  # what DATABASE_PREPARED_STATEMENTS=false leaves
    try:
        with prepared_cursor(connection) as cursor:
            cursor.execute(STATEMENT, [1, "x"])
            assert cursor.fetchone() == (2, "x")
    finally:
        connection.connection.prepare_threshold = threshold

    assert _prepared(STATEMENT) == []


@pytest.mark.django_db
def test_statements_are_logged_and_errors_wrapped_as_djangos():
    with CaptureQueriesContext(connection) as captured, prepared_cursor(connection) as cursor:
        cursor.execute(STATEMENT, [1, "x"])
    assert [query["sql"] for query in captured.captured_queries] == ["SELECT 1::bigint + 1, 'x'::text"]

    with pytest.raises(DatabaseError), prepared_cursor(connection) as cursor:
        cursor.execute("SELECT %s::bigint / 0", [1])


@pytest.mark.parametrize(("setting", "threshold"), [("true", "5"), ("false", "None")])
def test_the_setting_decides_whether_connections_may_prepare(setting, threshold):
    """DATABASE_PREPARED_STATEMENTS=false (PgBouncer in transaction mode without prepared statements) leaves Django's
    prepare_threshold of None, for the primary and the replica."""
    program = (
        "from memory_project.settings import base; "
        "print(*[d.get('OPTIONS', {}).get('prepare_threshold') for d in base.DATABASES.values()])"
    )
    env = os.environ | {"DATABASE_PREPARED_STATEMENTS": setting, "DATABASE_REPLICA_URL": "postgres://r@replica/memory"}
    printed = subprocess.run(
        [sys.executable, "-c", program], env=env, cwd=settings.BASE_DIR, capture_output=True, text=True, check=True
    ).stdout.split()

    assert printed == [threshold, threshold]
