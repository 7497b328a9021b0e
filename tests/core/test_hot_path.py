"""The searches' lean request path gives exactly what DRF's per-request serializers give: the same validated data or
the same errors for any input, and the same rendered hits of both searches."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from rest_framework import serializers

from api.conversations.search_views import (
    MessageHitOutputSerializer,
    MessageSearchInputSerializer,
    MessageSearchOutputSerializer,
)
from api.facts.serializers import FactHitOutputSerializer, MemorySearchInputSerializer, MemorySearchOutputSerializer
from conversations.selectors.message_search import messages_search
from conversations.services.message_embeddings import messages_embed_missing
from core.api.hot_path import input_validate, output_represent
from facts.models import Fact
from facts.selectors.search import facts_search
from facts.services.facts import fact_close, fact_create
from tests.factories import MessageFactory

INPUTS = [
    {"query": "where does Gene live"},
    {"query": "  padded  ", "user": "gene", "top_k": 3, "mode": "text", "min_similarity": 0.2},
    {"query": "q", "scopes": ["user", "agent"], "tags": ["a"], "as_of": "2026-01-01T00:00:00Z", "mmr_lambda": 0.7},
    {"query": "q", "recency_weight": 1, "include_history": True, "fallback_to_recent": False},
    {"query": "q", "session": "s-1", "user": "gene"},
    {},
    {"query": 5},
    {"query": "q", "top_k": 0, "mode": "fuzzy", "min_similarity": "0.2", "user": ["gene"]},
    {"query": "q", "top_k": True, "scopes": [], "as_of": "yesterday", "mmr_lambda": 2},
    {"query": "x" * 2001},
    ["query"],
    "query",
    None,
]


def _by_drf(serializer_class: type[serializers.Serializer], data: object) -> tuple[str, object]:
    serializer = serializer_class(data=data)
    if serializer.is_valid():
        return "valid", dict(serializer.validated_data)
    return "invalid", serializer.errors


def _lean(serializer_class: type[serializers.Serializer], data: object) -> tuple[str, object]:
    try:
        return "valid", input_validate(serializer_class=serializer_class, data=data)
    except serializers.ValidationError as error:
        return "invalid", error.detail


@pytest.mark.parametrize("serializer_class", [MemorySearchInputSerializer, MessageSearchInputSerializer])
def test_validation_with_one_shared_instance_equals_a_serializer_per_request(serializer_class):
    for data in INPUTS:
        assert _lean(serializer_class, data) == _by_drf(serializer_class, data), data


@pytest.mark.parametrize("serializer_class", [MemorySearchInputSerializer, MessageSearchInputSerializer])
def test_the_shared_instance_keeps_nothing_between_threads(serializer_class):
    """The web server's threads validate at the same time with the one instance: each gets its own input's result."""
    inputs = INPUTS * 40
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda data: _lean(serializer_class, data), inputs))
    assert results == [_by_drf(serializer_class, data) for data in inputs]


@pytest.mark.django_db
def test_hits_render_as_the_output_serializer_renders_them(agent, end_user, session):
    fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene lives in Lyon", source_session=session)
    fact_create(agent=agent, user=None, scopes=["agent"], content="Support opens at nine in Lyon", tags=["hours"])
    closed = fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene lived in Paris")
    fact_close(fact=closed, reason="moved")
    searches = [
        {"query": "Where does Gene live?"},  # both signals: similarity, ranks and text scores
        {"query": "Lyon", "mode": "text"},  # no vector: similarity and vector rank may be None
        {"query": "Paris", "include_history": True},
        {"query": "nothing like it", "fallback_to_recent": True},  # scores 0
    ]
    rendered = 0
    for options in searches:
        hits = facts_search(agent=agent, user=end_user, **options)
        lean = output_represent(serializer_class=FactHitOutputSerializer, instances=hits)
        assert lean == MemorySearchOutputSerializer({"results": hits}).data["results"]
        rendered += len(hits)
    assert rendered >= 6 and Fact.objects.filter(agent=agent).count() == 3


@pytest.mark.django_db
def test_message_hits_render_as_the_output_serializer_renders_them(agent, end_user, session):
    said = [
        MessageFactory(session=session, content="My cat Tom keeps scratching the sofa"),
        MessageFactory(session=session, role="assistant", content="Try a scratching post", metadata={"speaker": "Ana"}),
        MessageFactory(session=session, content="Tom ignores it", idempotency_key="m-3"),
    ]
    messages_embed_missing(message_ids=[message.pk for message in said])
    rendered = 0
    for mode in ("hybrid", "text", "semantic"):
        hits = messages_search(agent=agent, user=end_user, session=None, query="cat scratching the sofa", mode=mode)
        lean = output_represent(serializer_class=MessageHitOutputSerializer, instances=hits)
        assert lean == MessageSearchOutputSerializer({"results": hits}).data["results"]
        rendered += len(hits)
    assert rendered >= 6
