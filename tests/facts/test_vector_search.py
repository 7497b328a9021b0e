import numpy as np
import pytest
from django.db import connection
from django.test import override_settings

from core.embeddings.spaces import embedding_space_active
from facts.models import Fact, FactEmbedding
from facts.selectors import fact_embeddings_nearest
from facts.services.facts import fact_create, fact_embeddings_write
from facts.services.vector_indexes import fact_vector_index_name, fact_vector_indexes_maintain
from tests.factories import EndUserFactory


@pytest.mark.django_db
def test_nearest_fact_by_cosine_with_real_embeddings(agent, end_user):
    other_user = EndUserFactory(agent=agent)
    fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene's birthday is March 15th")
    fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene works as a nurse in Lisbon")
    fact_create(agent=agent, user=None, scopes=["agent"], content="The support line opens at 9am on weekdays")
    fact_create(agent=agent, user=other_user, scopes=["user"], content="Gene's birthday party is on Friday")

    hits = list(fact_embeddings_nearest(agent=agent, user=end_user, query="When was Gene born?", limit=3))

    assert hits[0].fact.content == "Gene's birthday is March 15th"
    assert [hit.distance for hit in hits] == sorted(hit.distance for hit in hits)
    assert all(hit.fact.user_id in (end_user.pk, None) for hit in hits)
    assert FactEmbedding.objects.get(fact=hits[0].fact).space.model == "all-MiniLM-L6-v2"


@pytest.mark.django_db(transaction=True)
@override_settings(MEMORY_SEARCH_HNSW_MIN_SHARED_FACTS=1000)
def test_agent_wide_nearest_search_uses_the_agents_hnsw_index(agent):
    space = embedding_space_active()
    rng = np.random.default_rng(7)
    facts = Fact.objects.bulk_create(
        [
            Fact(
                agent=agent,
                scopes=["agent"],
                content=f"generated fact {i}",
                content_hash=f"{i:064d}",
                formed_at="2026-01-01T00:00:00Z",
                valid_from="2026-01-01T00:00:00Z",
            )
            for i in range(3000)
        ]
    )
    vectors = rng.normal(size=(len(facts), 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    fact_embeddings_write(facts=facts, space=space, vectors=list(vectors))
    fact_create(agent=agent, user=None, scopes=["agent"], content="The office cat is named Miso")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE facts_factembedding; ANALYZE facts_fact")

    fact_vector_indexes_maintain(space=space)
    queryset = fact_embeddings_nearest(agent=agent, query="What is the cat called?", limit=5)
    plan = queryset.explain()

    assert fact_vector_index_name(space_id=space.pk, agent_id=agent.pk) in plan, plan
    assert list(queryset)[0].fact.content == "The office cat is named Miso"
