"""The query plans of facts_search on a store of 50k facts over 500 users: per-user searches never scan the facts or
embedding tables, agent-wide vector search uses the space's HNSW index."""

import re

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from conversations.models import EndUser
from core.embeddings.spaces import (
    embedding_space_active,
    embedding_space_ensure_indexes,
    embedding_space_index_name,
)
from facts.models import Fact, FactEmbedding
from facts.selectors import facts_search
from facts.services import fact_create, fact_embeddings_write

USERS = 500
USER_ONLY_FACTS_PER_USER = 60
# Facts with scopes user + agent: owned by a user, visible in every conversation of the agent.
SHARED_FACTS_PER_USER = 40
# A vocabulary where each word is in about 1% of the facts, as names and topics are; every fact also says "fact".
WORDS = [f"topic{n}" for n in range(200)]


def _random_unit_vectors(rng: np.random.Generator, count: int) -> list[list[float]]:
    vectors = rng.normal(size=(count, 384))
    # Python floats of three decimals turn into SQL text about three times faster than numpy scalars.
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).round(3).tolist()


def _build_store(agent) -> list[EndUser]:
    rng = np.random.default_rng(42)
    space = embedding_space_active()
    users = EndUser.objects.bulk_create([EndUser(agent=agent, external_id=f"bulk-{i}") for i in range(USERS)])
    owners = [(user, ["user"]) for user in users for _ in range(USER_ONLY_FACTS_PER_USER)]
    owners += [(user, ["user", "agent"]) for user in users for _ in range(SHARED_FACTS_PER_USER)]
    rng.shuffle(owners)  # a real store interleaves users and scopes over time
    words = rng.choice(WORDS, size=(len(owners), 2))
    now = timezone.now()
    with connection.cursor() as cursor:
        # The space's HNSW index is built once after the load: inserting 50k rows into it one by one is far slower.
        cursor.execute(f"DROP INDEX {embedding_space_index_name(table=FactEmbedding._meta.db_table, space=space)}")
        # The rows are consistent by construction: skip the foreign-key triggers, whose deferred checks of 100k
        # rows in one transaction take minutes.
        cursor.execute("SET LOCAL session_replication_role = replica")
    for start in range(0, len(owners), 10_000):
        facts = Fact.objects.bulk_create(
            [
                Fact(
                    agent=agent,
                    user=user,
                    scopes=scopes,
                    content=f"fact {i} is about {words[i][0]} and {words[i][1]}",
                    content_hash=f"{i:064d}",
                    formed_at=now,
                    valid_from=now,
                )
                for i, (user, scopes) in enumerate(owners[start : start + 10_000], start=start)
            ]
        )
        fact_embeddings_write(facts=facts, space=space, vectors=_random_unit_vectors(rng, len(facts)))
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = origin")
        cursor.execute("SET LOCAL maintenance_work_mem = '512MB'")
        embedding_space_ensure_indexes(space=space)
        cursor.execute("ANALYZE facts_fact; ANALYZE facts_factembedding")
    return users


def _plans_of_search(**search_kwargs) -> list[str]:
    """EXPLAIN of every query on the facts tables that facts_search ran, in the same transaction (so with the same
    SET LOCAL settings, which precede the vector query in its own statement)."""
    with CaptureQueriesContext(connection) as captured:
        facts_search(**search_kwargs)
    plans = []
    with connection.cursor() as cursor:
        for query in captured.captured_queries:
            sql = query["sql"].rsplit("; ", 1)[-1]
            if sql.lstrip(" (").upper().startswith("SELECT") and "facts_fact" in sql:
                cursor.execute(f"EXPLAIN {sql}")
                plans.append("\n".join(row[0] for row in cursor.fetchall()))
    return plans


@pytest.mark.django_db
def test_per_user_search_uses_indexes_and_agent_wide_search_uses_hnsw(agent):
    users = _build_store(agent)
    user = users[USERS // 2]
    target = fact_create(agent=agent, user=user, scopes=["user"], content="The user's beagle is named Biscuit")
    assert Fact.objects.count() == USERS * (USER_ONLY_FACTS_PER_USER + SHARED_FACTS_PER_USER) + 1

    per_user = _plans_of_search(agent=agent, user=user, query="beagle Biscuit topic7", top_k=10)
    common_words = _plans_of_search(agent=agent, user=user, query="fact", top_k=10)
    agent_wide = _plans_of_search(agent=agent, user=None, query="topic3 topic4", top_k=10, mode="semantic")

    # The user's own vectors, the agent-wide vectors and the text matches' vectors in one query; the hits.
    assert len(per_user) == 2, per_user
    for plan in per_user:
        assert not re.search(r"Seq Scan on facts_(fact|factembedding)\b", plan), plan
    # A word in every fact may scan the agent-wide facts, but never drags the user's own part along.
    own_parts = [plan for plan in common_words if f"restricted_to_user_id = {user.pk})" in plan]
    assert len(own_parts) == 1, common_words
    for plan in own_parts:
        assert "fact_embedding_scope" in plan and not re.search(r"Seq Scan on facts_", plan), plan
    hnsw_index = embedding_space_index_name(table=FactEmbedding._meta.db_table, space=embedding_space_active())
    assert any(hnsw_index in plan for plan in agent_wide), agent_wide
    assert facts_search(agent=agent, user=user, query="beagle Biscuit", top_k=1)[0].fact == target
