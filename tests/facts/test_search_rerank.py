"""Fact search with the agent's reranker, on real PostgreSQL with the real embedding model and a local rerank server
(tests.rerank_server_support, scoring by word overlap): off by default; on, the fused top is reordered by the
server and may lift a fact from below top_k into it; world time's ruling stays; a single-signal mode keeps to its
signal; a failing server leaves the search as it was."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

import pytest

from agents.models import Agent
from core.search.rerank import Reranker
from facts.models import Fact
from facts.selectors import facts_search
from facts.services.facts import fact_create
from facts.world_time import TimePrecision, WorldTime
from tests.factories import AgentFactory
from tests.facts.search_support import FILLER
from tests.rerank_server_support import RerankServer, overlap_score

pytestmark = pytest.mark.django_db
QUERY = "Which instrument does the user play in the orchestra?"


@pytest.fixture
def server(settings) -> Iterator[RerankServer]:
    with RerankServer().running() as running:
        settings.RERANK_URL = running.url("/v1/rerank")
        settings.RERANK_API_FORMAT = "cohere"
        settings.RERANK_TOP_N = 20
        yield running


@pytest.fixture
def store(agent, end_user) -> list[Fact]:
    facts = [fact_create(agent=agent, user=end_user, scopes=["user"], content=content) for content in FILLER]
    facts.append(
        fact_create(
            agent=agent,
            user=end_user,
            scopes=["user"],
            content="Which orchestra? The user does play in the one in town",
        )
    )
    return facts


def _contents(hits) -> list[str]:
    return [hit.fact.content for hit in hits]


def _reranking(agent: Agent, reranker: str = Reranker.HTTP) -> Agent:
    agent.reranker = reranker
    agent.save(update_fields=["reranker"])
    return agent


def test_a_new_agent_does_not_rerank(agent, end_user, store, server):
    hits = facts_search(agent=agent, user=end_user, query=QUERY)

    assert AgentFactory().reranker == agent.reranker == "off"
    assert server.requests == []
    assert all(hit.rerank_rank is None for hit in hits)


def test_the_fused_top_is_reordered_by_the_server(agent, end_user, store, server):
    fused = facts_search(agent=agent, user=end_user, query=QUERY, top_k=20, record_access=False)

    hits = facts_search(agent=_reranking(agent), user=end_user, query=QUERY, top_k=20, record_access=False)

    (request,) = server.requests
    assert request["body"]["documents"] == _contents(fused)  # the fused top, in its order
    expected = sorted(_contents(fused), key=lambda content: -overlap_score(QUERY, content))
    assert _contents(hits) == expected != _contents(fused)
    assert [hit.rerank_rank for hit in hits] == list(range(1, len(hits) + 1))
    assert hits[0].rerank_score == overlap_score(QUERY, hits[0].fact.content)
    assert {hit.fact.pk: hit.score for hit in hits} == {hit.fact.pk: hit.score for hit in fused}  # still the fused


def test_the_reranker_sees_past_top_k_and_returns_top_k(agent, end_user, store, server, settings):
    settings.RERANK_TOP_N = 7
    fused = facts_search(agent=agent, user=end_user, query=QUERY, top_k=7, record_access=False)
    best = max(_contents(fused), key=lambda content: overlap_score(QUERY, content))
    assert best != fused[0].fact.content  # below top_k as fused

    hits = facts_search(agent=_reranking(agent), user=end_user, query=QUERY, top_k=1, record_access=False)

    assert len(server.requests[0]["body"]["documents"]) == 7
    assert _contents(hits) == [best]


def test_what_world_time_ruled_out_stays_below(agent, end_user, server):
    # The old job is worded closer to the question than the new one: word overlap prefers it; world time does not.
    globex = fact_create(
        agent=agent,
        user=end_user,
        scopes=["user"],
        content="The user works as a data analyst at Globex, where the user works.",
        world_time=WorldTime(
            start=date(2017, 1, 1),
            start_precision=TimePrecision.YEAR,
            end=date(2023, 3, 1),
            end_precision=TimePrecision.MONTH,
        ),
    )
    initech = fact_create(
        agent=agent,
        user=end_user,
        scopes=["user"],
        content="The user started a new job at Initech.",
        world_time=WorldTime(start=date(2023, 3, 1), start_precision=TimePrecision.MONTH),
    )
    for content in FILLER:
        fact_create(agent=agent, user=end_user, scopes=["user"], content=content)
    query = "Where does the user work now?"
    assert overlap_score(query, globex.content) > overlap_score(query, initech.content)

    hits = facts_search(agent=_reranking(agent), user=end_user, query=query, record_access=False)

    assert server.requests and hits[0].fact == initech
    assert [hit.fact for hit in hits].index(globex) > 0 and hits[0].rerank_rank is not None


@pytest.mark.parametrize("mode", ["semantic", "text"])
def test_a_single_signal_mode_is_not_reranked(agent, end_user, store, server, mode):
    hits = facts_search(agent=_reranking(agent), user=end_user, query=QUERY, mode=mode, record_access=False)

    assert hits and server.requests == []


def test_a_failing_server_leaves_the_search_as_fused(agent, end_user, store, server):
    fused = facts_search(agent=agent, user=end_user, query=QUERY, record_access=False)
    server.misbehaviour = "status_500"

    hits = facts_search(agent=_reranking(agent), user=end_user, query=QUERY, record_access=False)

    assert server.requests and hits == fused


def test_the_llm_reranks_when_chosen(agent, end_user, store, scripted_llm):
    fused = facts_search(agent=agent, user=end_user, query=QUERY, top_k=3, record_access=False)
    scripted_llm.script("rerank", lambda request: {"order": list(range(request.inputs["passages"], 0, -1))})

    hits = facts_search(agent=_reranking(agent, Reranker.LLM), user=end_user, query=QUERY, top_k=3)

    prompt = scripted_llm.calls("rerank")[0].messages[-1]["content"]
    assert f"[1] {fused[0].fact.content}" in prompt
    assert hits[0].rerank_rank == 1 and hits[0].fact != fused[0].fact  # the last of the window, first
