"""The query plans of facts_search: full text reads each scope part's matches through its GIN index and the user's own
vectors through their btree entries (never a scan of the facts or embedding tables); the agent-wide vector part scans
exactly below MEMORY_SEARCH_HNSW_MIN_SHARED_FACTS current agent-wide facts and uses the agent's own HNSW index from
there on, decided by the kept count."""

import re

import numpy as np
import pytest
from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.models import EndUser
from core.embeddings.spaces import embedding_space_active
from facts.models import Fact
from facts.selectors import facts_search
from facts.services.facts import fact_create, fact_embeddings_write
from facts.services.vector_indexes import fact_vector_index_name, fact_vector_indexes, fact_vector_indexes_maintain
from tests.factories import AgentFactory

USERS = 300
USER_ONLY_FACTS_PER_USER = 30
# Facts with scopes user + agent: owned by a user, visible in every conversation of the agent.
SHARED_FACTS_PER_USER = 15
# A vocabulary where each word is in about 1% of the facts, as names and topics are; every fact also says "fact".
WORDS = [f"topic{n}" for n in range(200)]


def _random_unit_vectors(rng: np.random.Generator, count: int) -> list[list[float]]:
    vectors = rng.normal(size=(count, 384))
    # Python floats of three decimals turn into SQL text about three times faster than numpy scalars.
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).round(3).tolist()


def _build_store(agent, *, users: int, own_per_user: int, shared_per_user: int, seed: int = 42) -> list[EndUser]:
    rng = np.random.default_rng(seed)
    space = embedding_space_active()
    end_users = EndUser.objects.bulk_create(
        [EndUser(agent=agent, external_id=f"bulk-{agent.pk}-{i}") for i in range(users)]
    )
    owners = [(user, ["user"]) for user in end_users for _ in range(own_per_user)]
    owners += [(user, ["user", "agent"]) for user in end_users for _ in range(shared_per_user)]
    rng.shuffle(owners)  # a real store interleaves users and scopes over time
    words = rng.choice(WORDS, size=(len(owners), 2))
    now = timezone.now()
    for start in range(0, len(owners), 5_000):
        facts = Fact.objects.bulk_create(
            [
                Fact(
                    agent=agent,
                    user=user,
                    scopes=scopes,
                    content=f"fact {i} is about {words[i][0]} and {words[i][1]}",
                    content_hash=f"{agent.pk}-{i:060d}",
                    formed_at=now,
                    valid_from=now,
                )
                for i, (user, scopes) in enumerate(owners[start : start + 5_000], start=start)
            ]
        )
        fact_embeddings_write(facts=facts, space=space, vectors=_random_unit_vectors(rng, len(facts)))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE facts_fact; ANALYZE facts_factembedding")
    return end_users


def _search_plans(*, analyze: bool = False, **search_kwargs) -> list[str]:
    """EXPLAIN of every query on the facts tables that facts_search ran, in the same transaction (so with the same
    SET LOCAL settings, which precede the vector query in its own statement)."""
    with CaptureQueriesContext(connection) as captured:
        facts_search(**search_kwargs)
    plans = []
    with connection.cursor() as cursor:
        for query in captured.captured_queries:
            sql = query["sql"].rsplit("; ", 1)[-1]
            if sql.lstrip(" (\n").upper().startswith(("SELECT", "WITH")) and "facts_fact" in sql:
                cursor.execute(f"EXPLAIN {'(ANALYZE, COSTS OFF, TIMING OFF) ' if analyze else ''}{sql}")
                plans.append("\n".join(row[0] for row in cursor.fetchall()))
    return plans


@pytest.mark.django_db
def test_per_user_search_reads_its_scope_through_indexes(agent):
    users = _build_store(
        agent, users=USERS, own_per_user=USER_ONLY_FACTS_PER_USER, shared_per_user=SHARED_FACTS_PER_USER
    )
    user = users[USERS // 2]
    target = fact_create(agent=agent, user=user, scopes=["user"], content="The user's beagle is named Biscuit")
    assert Fact.objects.count() == USERS * (USER_ONLY_FACTS_PER_USER + SHARED_FACTS_PER_USER) + 1

    per_user = _search_plans(agent=agent, user=user, query="beagle Biscuit topic7", top_k=10)
    common_words = _search_plans(agent=agent, user=user, query="fact", top_k=10)

    # A capitalised word could be the user's name: one read of the user's current facts, through the scope's index.
    name_read = per_user.pop(0)
    assert "fact_scope_history" in name_read and not re.search(r"Seq Scan on facts_", name_read), name_read
    # Full text (while the query is embedded); the vectors and the text matches' details; the hits.
    assert len(per_user) == 3 and len(common_words) == 3, per_user
    for text_plan in (per_user[0], common_words[0]):
        # Each scope part finds its matches in its own GIN index, keyed by the agent or the user: no scan.
        assert "fact_shared_current_text" in text_plan and "fact_own_current_text" in text_plan, text_plan
        assert re.search(r"Index Cond: \(\(agent_id = '\d+'::bigint\) AND \(search_vector @@", text_plan), text_plan
        assert re.search(r"Index Cond: \(\(user_id = '\d+'::bigint\) AND \(search_vector @@", text_plan), text_plan
        assert not re.search(r"Seq Scan on facts_", text_plan), text_plan
    for vector_plan in (per_user[1], common_words[1]):
        # The user's own vectors come from their btree entries, whatever the words. (The agent-wide part of this
        # one-agent store is a third of the table: scanning it is the planner's right call.)
        own_part = vector_plan.split("->  Limit")[1]
        assert "restricted_to_user_id = '" in own_part and "fact_embedding_scope" in own_part, vector_plan
    for rows_plan in (per_user[2], common_words[2]):
        assert not re.search(r"Seq Scan on facts_", rows_plan), rows_plan
    assert facts_search(agent=agent, user=user, query="beagle Biscuit", top_k=1)[0].fact == target


@pytest.mark.django_db(transaction=True)
@override_settings(MEMORY_SEARCH_HNSW_MIN_SHARED_FACTS=1000)
def test_the_kept_count_chooses_between_exact_scan_and_the_agents_hnsw_index():
    large = AgentFactory(external_id="large-tenant")
    small = AgentFactory(external_id="small-tenant")
    # 2,000 agent-wide facts and 100, among other tenants' facts, as in a shared store (where one tenant's rows are
    # few of the table's, the planner prefers an index to a scan).
    _build_store(large, users=100, own_per_user=2, shared_per_user=20, seed=1)
    _build_store(small, users=10, own_per_user=2, shared_per_user=10, seed=2)
    _build_store(AgentFactory(external_id="others"), users=100, own_per_user=60, shared_per_user=0, seed=3)
    space = embedding_space_active()

    changes = fact_vector_indexes_maintain(space=space)

    assert changes.built == [fact_vector_index_name(space_id=space.pk, agent_id=large.pk)]
    assert fact_vector_indexes(space_id=space.pk) == {large.pk: True}
    assert fact_vector_indexes_maintain(space=space).built == []  # idempotent
    index = fact_vector_index_name(space_id=space.pk, agent_id=large.pk)
    with transaction.atomic():
        large_plan = _search_plans(analyze=True, agent=large, user=None, query="topic3", mode="semantic")[0]
        small_plan = _search_plans(analyze=True, agent=small, user=None, query="topic3", mode="semantic")[0]
    # One branch runs, the other is never executed; which one is decided by the count, not by the planner's guess.
    assert re.search(rf"Index Scan using {index} .*\n(.*\n)*?.*Index Searches: 1", large_plan), large_plan
    assert "never executed" in large_plan, large_plan
    assert index not in small_plan and "never executed" in small_plan, small_plan
    assert "fact_embedding_scope" in small_plan, small_plan

    # The HNSW search finds what an exact scan finds (random vectors, HNSW's hardest case: nearly all of it).
    hnsw = [hit.fact.pk for hit in facts_search(agent=large, user=None, query="topic3", mode="semantic", top_k=10)]
    with override_settings(MEMORY_SEARCH_HNSW_MIN_SHARED_FACTS=10_000):
        exact = [hit.fact.pk for hit in facts_search(agent=large, user=None, query="topic3", mode="semantic", top_k=10)]
    assert hnsw[0] == exact[0] and len(set(hnsw) & set(exact)) >= 8, (hnsw, exact)

    # Once the agent falls below half the threshold, its index goes.
    shared = Fact.objects.filter(agent=large, scopes__contains=["agent"]).order_by("pk").values_list("pk", flat=True)
    Fact.objects.filter(pk__in=list(shared[:1600])).delete()
    assert fact_vector_indexes_maintain(space=space).dropped == [index]
    assert fact_vector_indexes(space_id=space.pk) == {}
