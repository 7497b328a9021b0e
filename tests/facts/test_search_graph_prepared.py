"""The graph signal's statements run prepared (core/runtime/prepared_statements.py): prepared once per connection,
reused, and with the same answer as the same statements run unprepared through Django's cursor."""

from __future__ import annotations

import pytest
from django.db import connection

from core.embeddings.spaces import embedding_space_active
from facts.selectors.graph_search import facts_graph_ranking
from facts.selectors.search_scope import FactSearchScope

QUESTION = "Where could Maria visit her friend's office?"


def _scope(agent, end_user) -> FactSearchScope:
    space = embedding_space_active()
    return FactSearchScope(space_id=space.pk, dimensions=space.dimensions, agent_id=agent.pk, user_id=end_user.pk)


def _runs_of_prepared(prefix: str) -> int:
    """How many times this connection ran its prepared statements that start with `prefix`."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(generic_plans + custom_plans), 0) FROM pg_prepared_statements "
            "WHERE ltrim(statement, E' \\n') LIKE %s",
            [prefix + "%"],
        )
        return cursor.fetchone()[0]


@pytest.mark.django_db
def test_the_walk_runs_twice_on_one_connection_prepared_with_the_same_rows(agent, end_user, chain):  # noqa: F811
    scope = _scope(agent, end_user)
    first = facts_graph_ranking(scope=scope, query=QUESTION, hops=2, limit=20)
    second = facts_graph_ranking(scope=scope, query=QUESTION, hops=2, limit=20)

    assert [row.fact_id for row in first[:3]] == [chain["friend"].pk, chain["job"].pk, chain["city"].pk]
    assert second == first
    # Both statements were prepared on this connection and the second search ran the same prepared statements.
    assert _runs_of_prepared("SELECT entity.id, entity.is_user") == 2
    assert _runs_of_prepared("WITH RECURSIVE walk") == 2


@pytest.mark.django_db
def test_the_walk_prepared_returns_what_it_returns_unprepared(agent, end_user, chain):  # noqa: F811
    scope = _scope(agent, end_user)
    prepared = {hops: facts_graph_ranking(scope=scope, query=QUESTION, hops=hops, limit=20) for hops in (1, 2)}
    raw_connection = connection.connection
    threshold = raw_connection.prepare_threshold
    raw_connection.prepare_threshold = None  # DATABASE_PREPARED_STATEMENTS off: Django's own cursor
    try:
        unprepared = {hops: facts_graph_ranking(scope=scope, query=QUESTION, hops=hops, limit=20) for hops in (1, 2)}
    finally:
        raw_connection.prepare_threshold = threshold

    assert prepared == unprepared
    assert len(prepared[2]) > len(prepared[1]) > 0
