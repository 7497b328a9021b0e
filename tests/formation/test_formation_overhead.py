"""What one formation run costs besides the LLM: each new fact text embedded once, in one batch, and the stored
vectors are the ones reconciliation compared; the embedding space is looked up when planning and once more when
applying (a re-embed may have switched it while the LLM answered)."""

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from conversations.services.ingestion import MessageInput, session_append_messages
from core.embeddings.providers import get_embedding_provider
from core.embeddings.spaces import embedding_space_active
from facts.models import Fact, FactEmbedding
from formation.services.formation import session_form_memories


@pytest.fixture
def embedded_texts(monkeypatch) -> list[list[str]]:
    provider = get_embedding_provider()
    original = provider.embed
    batches: list[list[str]] = []

    def recording(texts):
        batches.append(list(texts))
        return original(texts)

    monkeypatch.setattr(provider, "embed", recording)
    return batches


@pytest.mark.django_db
def test_a_formation_run_embeds_each_new_fact_once_and_stores_that_vector(agent, embedded_texts):
    result = session_append_messages(
        agent=agent,
        user_external_id="u1",
        session_external_id="s1",
        messages=[
            MessageInput(role="user", content="Hi! My name is Gene Parker and I live in Lisbon."),
            MessageInput(role="assistant", content="Nice to meet you, Gene."),
            MessageInput(role="user", content="I work as a nurse. I love hiking in the mountains."),
        ],
    )
    embedded_texts.clear()  # ingestion's own message embedding is not formation's
    embedding_space_active()  # a fresh database creates its space on first use; a running service has one

    with CaptureQueriesContext(connection) as queries:
        outcome = session_form_memories(session_id=result.session.pk, trigger="explicit")

    facts = list(Fact.objects.filter(agent=agent))
    assert outcome.job.facts_added == len(facts) >= 2
    assert len(embedded_texts) == 1  # one batch
    assert sorted(embedded_texts[0]) == sorted(fact.content for fact in facts)
    planned = dict(zip(embedded_texts[0], get_embedding_provider().embed(embedded_texts[0]), strict=True))
    for fact in facts:
        stored = FactEmbedding.objects.get(fact=fact).embedding
        assert np.allclose(stored, planned[fact.content], atol=1e-6)
    space_lookups = [q for q in queries.captured_queries if 'FROM "core_embeddingspace"' in q["sql"]]
    assert len(space_lookups) == 2


@pytest.mark.django_db
def test_vectors_planned_in_a_space_retired_meanwhile_are_recomputed_in_the_active_one(agent, monkeypatch):
    from core.models import EmbeddingSpace
    from facts.services import reconciliation
    from facts.services.extraction import ExtractedFact

    active = embedding_space_active()
    retired = EmbeddingSpace.objects.create(
        name="local:older-model:384",
        provider="local",
        model="older-model",
        dimensions=384,
        status=EmbeddingSpace.Status.RETIRED,
    )
    stale_vector = np.ones(384, dtype=np.float32) / np.sqrt(384)
    decision = reconciliation.FactDecision(
        new=ExtractedFact(content="Gene lives in Lisbon.", scopes=["agent"], source_messages=[]),
        owner=None,
        vector=stale_vector,
        space=retired,
        action="ADD",
        reason="new",
    )
    reconciliation._decisions_move_to_active_space(decisions=[decision])

    assert decision.space.pk == active.pk
    assert np.allclose(decision.vector, get_embedding_provider().embed_one("Gene lives in Lisbon."), atol=1e-6)
