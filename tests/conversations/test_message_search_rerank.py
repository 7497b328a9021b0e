"""Turn search with the agent's reranker, on real PostgreSQL with the real embedding model and a local rerank server
(tests.rerank_server_support): each turn is sent with who said it; the fused top is reordered by the server; off by
default; a failing server leaves the search as fused."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agents.models import Agent, EndUser
from conversations.models import Message, Session
from conversations.selectors.message_search import messages_search
from conversations.services.message_embeddings import messages_embed_missing
from core.search.rerank import Reranker
from tests.factories import MessageFactory
from tests.rerank_server_support import RerankServer, overlap_score

pytestmark = pytest.mark.django_db
QUERY = "What did Melanie paint last summer?"


@pytest.fixture
def server(settings) -> Iterator[RerankServer]:
    with RerankServer().running() as running:
        settings.RERANK_URL = running.url("/rerank")
        settings.RERANK_API_FORMAT = "tei"
        settings.RERANK_TOP_N = 20
        yield running


@pytest.fixture
def turns(agent: Agent, end_user: EndUser, session: Session) -> list[Message]:
    said = [
        ("Caroline", "I went to a pottery class with my mum"),
        ("Melanie", "I painted a sunset over the lake last summer"),
        ("Caroline", "Painting sounds lovely, what did you paint?"),
        ("Melanie", "The kids and I went camping in the mountains"),
        ("Caroline", "Summer is my favourite season for hikes"),
    ]
    messages = [
        MessageFactory(session=session, content=content, metadata={"speaker": speaker}) for speaker, content in said
    ]
    messages_embed_missing(message_ids=[message.pk for message in messages])
    return messages


def _search(agent: Agent, end_user: EndUser, **options):
    return messages_search(agent=agent, user=end_user, query=QUERY, **options)


def test_off_by_default(agent, end_user, turns, server):
    hits = _search(agent, end_user)

    assert agent.reranker == "off" and hits and server.requests == []
    assert all(hit.rerank_rank is None for hit in hits)


def test_the_fused_top_is_reordered_by_the_server_each_turn_with_its_speaker(agent, end_user, turns, server):
    fused = _search(agent, end_user)
    agent.reranker = Reranker.HTTP
    agent.save(update_fields=["reranker"])

    hits = _search(agent, end_user)

    sent = server.requests[0]["body"]["texts"]
    assert sent == [f"{hit.message.metadata['speaker']}: {hit.message.content}" for hit in fused]
    assert [f"{hit.message.metadata['speaker']}: {hit.message.content}" for hit in hits] == sorted(
        sent, key=lambda text: -overlap_score(QUERY, text)
    )
    assert [hit.rerank_rank for hit in hits] == list(range(1, len(hits) + 1))
    assert hits[0].rerank_score == overlap_score(QUERY, sent[[h.message for h in fused].index(hits[0].message)])


def test_a_failing_server_leaves_the_search_as_fused(agent, end_user, turns, server):
    fused = _search(agent, end_user)
    agent.reranker = Reranker.HTTP
    agent.save(update_fields=["reranker"])
    server.misbehaviour = "wrong_indexes"

    assert _search(agent, end_user) == fused
    assert len(server.requests) == 1
