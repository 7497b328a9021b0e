import numpy as np
import pytest

from core.embeddings.providers import get_embedding_provider
from core.embeddings.spaces import embedding_record_models, embedding_space_active
from core.models import EmbeddingSpace
from core.tokens import count_tokens, count_tokens_batch


def test_local_model_embeds_offline_into_unit_vectors():
    provider = get_embedding_provider()
    vectors = provider.embed(["My dog is called Rex.", "I have a puppy named Rex", "Quarterly tax filing deadline"])

    assert provider.space_name == "local:all-MiniLM-L6-v2:384"
    assert [vector.shape for vector in vectors] == [(384,)] * 3
    assert np.allclose([np.linalg.norm(vector) for vector in vectors], 1.0, atol=1e-4)
    paraphrase, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert paraphrase > 0.6 > unrelated


@pytest.mark.django_db
def test_first_use_creates_one_active_space_with_its_vector_indexes(django_db_blocker):
    space = embedding_space_active()

    assert space.status == EmbeddingSpace.Status.ACTIVE
    assert (space.provider, space.model, space.dimensions) == ("local", "all-MiniLM-L6-v2", 384)
    assert embedding_space_active() == space
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE indexname LIKE %s", [f"%_s{space.pk}_hnsw"])
        indexes = dict(cursor.fetchall())
    tables = {model._meta.db_table for model in embedding_record_models()}
    assert {"facts_factembedding", "conversations_messageembedding", "facts_referencechunkembedding"} <= tables
    assert set(indexes) == {f"{table}_s{space.pk}_hnsw" for table in tables}
    assert all("hnsw" in definition and "vector(384)" in definition for definition in indexes.values())


def test_token_counts_are_offline_and_plausible():
    assert count_tokens("") == 0
    assert count_tokens("Hello world") == 2
    text = "The quick brown fox jumps over the lazy dog near the riverbank."
    assert 12 <= count_tokens(text) <= 16
    assert count_tokens_batch(["Hello world", text]) == [2, count_tokens(text)]


def test_local_model_embeds_one_text_exactly_as_encode_does():
    provider = get_embedding_provider()
    texts = ["Where does Maria's sister work?", "hi", "", "Émilie ❤️ 東京", "word " * 400]
    for text in texts:
        expected = provider._loaded_model().encode([text], normalize_embeddings=True, convert_to_numpy=True)[0]
        assert np.array_equal(provider.embed_one(text), expected.astype(np.float32)), text
