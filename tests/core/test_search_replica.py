"""Search reads on a read replica: a real hot standby of the test server, fed by streaming replication, serves the
statements of fact and message search once DATABASE_REPLICA_URL names it; writes, and searches inside a transaction
on the primary, stay on the primary."""

import time
import uuid
from pathlib import Path

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
from memory_project.devstack import EmbeddedPostgresReplica


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
