"""reembed switches from the local model (384-d) to an OpenAI-compatible endpoint with other dimensions while searches
and writes keep running. The endpoint is a stub HTTP server on 127.0.0.1 that embeds by hashed bag of words."""

from __future__ import annotations

import re
import threading
import time

import numpy as np
import pytest
from django.db import connection, connections
from django.test import override_settings

from conversations.models import MessageEmbedding
from core.embeddings.spaces import embedding_space_active
from core.exceptions import ProviderError
from core.models import EmbeddingSpace
from facts.models import Fact, FactEmbedding
from facts.selectors import fact_embeddings_nearest
from facts.services.facts import fact_create
from facts.services.vector_indexes import fact_vector_index_name, fact_vector_indexes_maintain
from tests.reembed_support import (
    MARKER,
    QUERY,
    STUB_DIMENSIONS,
    STUB_MODEL,
    bag_of_words_vector,
    memory_to_reembed_create,
    reembed_to_stub,
)
from tests.statistics_support import corpus_statistics_kept, corpus_statistics_recount


def _hnsw_indexes() -> dict[str, bool]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE c.relname LIKE '%%_hnsw'"
        )
        return dict(cursor.fetchall())


@pytest.mark.django_db(transaction=True)
@override_settings(MEMORY_SEARCH_HNSW_MIN_SHARED_FACTS=1)
def test_reembed_to_other_dimensions_while_searches_and_writes_run(agent, end_user, embedding_stub):
    memory_to_reembed_create(agent, end_user)
    old_space = embedding_space_active()
    assert fact_vector_indexes_maintain(space=old_space).built == [
        fact_vector_index_name(space_id=old_space.pk, agent_id=agent.pk)
    ]
    stop = threading.Event()
    failures: list[str] = []
    spaces_searched: set[str] = set()
    searches = 0
    written: list[int] = []

    def search_loop() -> None:
        nonlocal searches
        try:
            while not stop.is_set():
                try:
                    hits = list(fact_embeddings_nearest(agent=agent, user=end_user, query=QUERY, limit=3))
                    spaces_searched.add(hits[0].space.name if hits else "")
                    if not hits or hits[0].fact.content != MARKER:
                        failures.append(f"wrong results: {[hit.fact.content for hit in hits]}")
                except Exception as error:  # any error is a failed search
                    failures.append(repr(error))
                searches += 1
        finally:
            connections.close_all()

    def write_loop() -> None:
        try:
            i = 0
            while not stop.is_set():
                written.append(
                    fact_create(agent=agent, user=None, scopes=["agent"], content=f"Written meanwhile {i}").pk
                )
                i += 1
                time.sleep(0.05)
        finally:
            connections.close_all()

    assert "would embed 41 facts" in reembed_to_stub("--dry-run")
    threads = [threading.Thread(target=search_loop), threading.Thread(target=write_loop)]
    for thread in threads:
        thread.start()
    try:
        time.sleep(0.5)
        output = reembed_to_stub("--retire-grace-seconds", "1")
        time.sleep(0.5)
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)

    new_space = embedding_space_active()
    assert failures == []
    assert searches > 20
    assert spaces_searched == {old_space.name, new_space.name}
    assert (new_space.provider, new_space.model, new_space.dimensions) == ("openai", STUB_MODEL, STUB_DIMENSIONS)
    old_space.refresh_from_db()
    assert old_space.status == EmbeddingSpace.Status.RETIRED
    # Every fact, including those written during the switch, is in the new space and nowhere else.
    assert len(written) > 5
    assert FactEmbedding.objects.filter(space=new_space).count() == Fact.objects.count()
    assert not FactEmbedding.objects.exclude(space=new_space).exists()
    # The ten embedded messages moved; the two never embedded stay unembedded.
    assert MessageEmbedding.objects.filter(space=new_space).count() == 10
    assert MessageEmbedding.objects.count() == 10
    # The agent's HNSW index was built in the new space before the switch; the old space's went with it.
    assert _hnsw_indexes() == {fact_vector_index_name(space_id=new_space.pk, agent_id=agent.pk): True}
    # The search statistics followed every vector written, moved and dropped.
    assert corpus_statistics_kept() == corpus_statistics_recount()
    assert {space for _, space, _ in corpus_statistics_kept()} == {new_space.pk}
    vector = FactEmbedding.objects.get(space=new_space, fact__content=MARKER).embedding
    assert np.allclose(vector, bag_of_words_vector(MARKER, STUB_DIMENSIONS), atol=1e-6)
    assert re.search(r"facts: 8/\d+ \(\d+/s, ETA \d+s\)", output), output
    assert f"{new_space.name} is active" in output


@pytest.mark.django_db(transaction=True)
def test_reembed_resumes_after_a_crash_embedding_only_what_the_new_space_lacks(agent, end_user, embedding_stub):
    memory_to_reembed_create(agent, end_user)
    old_space = embedding_space_active()
    embedding_stub.fail_after = 3

    with pytest.raises(ProviderError):
        reembed_to_stub()

    building = EmbeddingSpace.objects.get(status=EmbeddingSpace.Status.BUILDING)
    assert FactEmbedding.objects.filter(space=building).count() == 24
    assert embedding_space_active() == old_space
    embedding_stub.fail_after = None
    texts_before = embedding_stub.texts_embedded
    assert "would embed 17 facts" in reembed_to_stub("--dry-run")

    reembed_to_stub("--retire-grace-seconds", "0")

    assert embedding_space_active() == building
    assert embedding_stub.texts_embedded - texts_before == 17 + 10
    assert FactEmbedding.objects.filter(space=building).count() == 41
    reembed_to_stub("--retire-grace-seconds", "0")  # the active space again: nothing to embed
    assert embedding_stub.texts_embedded - texts_before == 17 + 10
    assert embedding_space_active() == building
