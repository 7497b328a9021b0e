"""The rerank step (core.search.rerank) against a local rerank server (tests.rerank_server_support: word overlap,
TEI's and Cohere's shapes) and through the scripted LLM: the reranker's order within the window, the rest as fused;
every failure keeps the fused order, counts its outcome and never raises."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from prometheus_client import REGISTRY

from core.exceptions import ProviderError
from core.llm.base import LLMRequest
from core.llm.providers import _cached_llm_provider, set_llm_provider_override
from core.models import LLMCall
from core.runtime.logging import secrets_redact
from core.search.rerank import hits_reranked
from tests.llm_stub_server import StubLLMServer, StubReply
from tests.rerank_server_support import RerankServer, overlap_score

QUERY = "which city does Maria's friend work in"
# In fused order; by word overlap with QUERY the reranker puts "Tom works in Zurich" first, the filler last.
PASSAGES = [
    "Maria drinks black coffee every morning",
    "Maria and Tom are old friends",
    "Tom works in Zurich, a city he loves",
    "The sky was grey on Sunday",
]


@dataclass(frozen=True)
class Hit:
    text: str
    band: int = 0
    rerank_rank: int | None = None
    rerank_score: float | None = None


def _hits(*texts: str) -> list[Hit]:
    return [Hit(text=text) for text in texts]


def _rerank(reranker: str, hits: list[Hit], **options) -> list[Hit]:
    return hits_reranked(reranker=reranker, query=QUERY, hits=hits, text=lambda hit: hit.text, agent_id=None, **options)


def _outcomes(reranker: str, outcome: str) -> float:
    return REGISTRY.get_sample_value("memory_rerank_total", {"reranker": reranker, "outcome": outcome}) or 0.0


@pytest.fixture
def server(settings) -> Iterator[RerankServer]:
    with RerankServer().running() as running:
        settings.RERANK_URL = running.url("/v1/rerank")
        settings.RERANK_API_FORMAT = "cohere"
        settings.RERANK_MODEL = "BAAI/bge-reranker-base"
        settings.RERANK_API_KEY = "rerank-key"
        settings.RERANK_TOP_N = 20
        yield running


def test_the_cohere_shape_orders_the_window_by_the_servers_scores(server):
    reranked = _rerank("http", _hits(*PASSAGES))

    expected = sorted(PASSAGES, key=lambda text: -overlap_score(QUERY, text))
    assert [hit.text for hit in reranked] == expected
    assert [hit.text for hit in reranked] != PASSAGES  # the server did change the order
    assert [hit.rerank_rank for hit in reranked] == [1, 2, 3, 4]
    assert [hit.rerank_score for hit in reranked] == [overlap_score(QUERY, text) for text in expected]
    (request,) = server.requests
    assert request["path"] == "/v1/rerank"
    body = request["body"]
    assert (body["model"], body["query"], body["documents"], body["top_n"]) == (
        "BAAI/bge-reranker-base",
        QUERY,
        PASSAGES,
        4,
    )
    assert body["authorization"] == "Bearer rerank-key"


def test_the_tei_shape(server, settings):
    settings.RERANK_URL = server.url("/rerank")
    settings.RERANK_API_FORMAT = "tei"
    settings.RERANK_API_KEY = ""

    reranked = _rerank("http", _hits(*PASSAGES))

    assert reranked[0].text == "Tom works in Zurich, a city he loves"
    assert reranked[0].rerank_score == overlap_score(QUERY, reranked[0].text)
    body = server.requests[0]["body"]
    assert (body["query"], body["texts"], body["truncate"]) == (QUERY, PASSAGES, True)
    assert "model" not in body and body["authorization"] is None


def test_only_the_top_n_is_reranked_the_rest_follows_as_fused(server, settings):
    settings.RERANK_TOP_N = 3
    tail = "Tom's city is Zurich where Maria's friend does work"  # the best overlap, but below the window

    reranked = _rerank("http", _hits(*PASSAGES, tail))

    assert server.requests[0]["body"]["documents"] == PASSAGES[:3]
    assert [hit.text for hit in reranked[3:]] == [PASSAGES[3], tail]
    assert reranked[4].rerank_rank is None and reranked[0].rerank_rank == 1


def test_a_band_keeps_what_the_search_ruled_below_whatever_the_reranker_says(server):
    hits = [Hit(text=PASSAGES[0]), Hit(text=PASSAGES[2], band=1), Hit(text=PASSAGES[3])]

    reranked = _rerank("http", hits, band=lambda hit: hit.band)

    assert [hit.text for hit in reranked] == [PASSAGES[0], PASSAGES[3], PASSAGES[2]]
    assert reranked[2].rerank_rank == 1  # the reranker's first, kept in its band


def test_off_sends_nothing(server):
    hits = _hits(*PASSAGES)

    assert _rerank("off", hits) == hits
    assert server.requests == []


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(
    "misbehaviour, delay, outcome",
    [
        ("", 1.0, "timeout"),
        ("status_500", 0.0, "error"),
        ("not_json", 0.0, "malformed"),
        ("wrong_indexes", 0.0, "malformed"),
        ("duplicate_indexes", 0.0, "malformed"),
        ("refused", 0.0, "error"),
        ("unconfigured", 0.0, "unconfigured"),
        ("unknown_format", 0.0, "unconfigured"),
    ],
)
def test_a_failing_server_keeps_the_fused_order(server, settings, caplog, misbehaviour, delay, outcome):
    server.misbehaviour, server.delay_seconds = misbehaviour, delay
    settings.RERANK_TIMEOUT_SECONDS = 0.2
    if misbehaviour == "refused":
        settings.RERANK_URL = f"http://127.0.0.1:{_closed_port()}/v1/rerank"
    if misbehaviour == "unconfigured":
        settings.RERANK_URL = ""
    if misbehaviour == "unknown_format":
        settings.RERANK_API_FORMAT = "jina"
    counted = _outcomes("http", outcome)
    hits = _hits(*PASSAGES)

    with caplog.at_level(logging.WARNING, logger="core.search.rerank"):
        reranked = _rerank("http", hits)

    assert reranked == hits
    assert all(hit.rerank_rank is None for hit in reranked)
    assert _outcomes("http", outcome) == counted + 1
    if outcome != "unconfigured":  # that one is said once per process
        assert f"fused order is kept: {outcome}" in caplog.text


# --- The LLM, listwise -------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_llm_ranks_the_numbered_passages(scripted_llm):
    scripted_llm.script("rerank", {"order": [3, 2]})

    reranked = _rerank("llm", _hits(*PASSAGES))

    # The numbers it gave first, then those it left out in the fused order.
    assert [hit.text for hit in reranked] == [PASSAGES[2], PASSAGES[1], PASSAGES[0], PASSAGES[3]]
    assert [hit.rerank_rank for hit in reranked] == [1, 2, 3, 4]
    assert all(hit.rerank_score is None for hit in reranked)
    (request,) = scripted_llm.calls("rerank")
    prompt = request.messages[-1]["content"]
    assert f"Query: {QUERY}" in prompt and f"[3] {PASSAGES[2]}" in prompt and f"[4] {PASSAGES[3]}" in prompt
    assert request.schema is not None and request.schema["required"] == ["order"]
    assert LLMCall.objects.filter(purpose="rerank", outcome="ok").count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    "reply",
    [
        {"order": [5, 1]},  # not a passage
        {"order": [1, 1, 2]},  # twice
        {"order": []},
        {"ranking": [1, 2]},
        "the third passage is best",
    ],
)
def test_a_reply_that_is_not_a_ranking_keeps_the_fused_order(scripted_llm, reply):
    scripted_llm.script("rerank", reply, reply)  # the client asks once more with the error, then gives up
    counted = _outcomes("llm", "malformed")
    hits = _hits(*PASSAGES)

    assert _rerank("llm", hits) == hits
    assert len(scripted_llm.calls("rerank")) == 2
    assert _outcomes("llm", "malformed") == counted + 1


@pytest.mark.django_db
def test_a_provider_error_keeps_the_fused_order(scripted_llm):
    def fails(request: LLMRequest) -> str:
        raise ProviderError("503 from the provider")

    scripted_llm.script("rerank", fails)
    counted = _outcomes("llm", "error")
    hits = _hits(*PASSAGES)

    assert _rerank("llm", hits) == hits
    assert _outcomes("llm", "error") == counted + 1


@pytest.mark.django_db
def test_without_an_llm_configured_the_fused_order_is_kept(settings):
    set_llm_provider_override(None)
    settings.LLM_PROVIDER = "offline"
    hits = _hits(*PASSAGES)

    assert _rerank("llm", hits) == hits
    assert not LLMCall.objects.filter(purpose="rerank").exists()


def test_the_rerank_key_never_reaches_the_logs(settings):
    settings.RERANK_API_KEY = "a-rerank-key-of-the-deployment"

    assert "a-rerank-key" not in secrets_redact("status 401: key a-rerank-key-of-the-deployment is not valid")


# --- The LLM over HTTP: the client's real code path, its guard and the search's deadline ----------------------------


@pytest.fixture
def llm_stub(settings) -> Iterator[StubLLMServer]:
    server = StubLLMServer()
    with server.running():
        settings.LLM_PROVIDER, settings.LLM_BASE_URL, settings.LLM_API_KEY = "openai", server.base_url, "stub-key"
        settings.LLM_TIMEOUT_SECONDS = 30
        settings.RERANK_LLM_TIMEOUT_SECONDS = 1.5
        set_llm_provider_override(None)
        _cached_llm_provider.cache_clear()
        try:
            yield server
        finally:
            _cached_llm_provider.cache_clear()


@pytest.mark.django_db
def test_the_llm_over_http_ranks_with_the_schema_sent(llm_stub):
    llm_stub.then(StubReply(content='{"order": [3, 1]}'))

    reranked = _rerank("llm", _hits(*PASSAGES))

    assert [hit.text for hit in reranked] == [PASSAGES[2], PASSAGES[0], PASSAGES[1], PASSAGES[3]]
    (request,) = llm_stub.requests
    assert request.body["response_format"]["json_schema"]["schema"]["required"] == ["order"]


@pytest.mark.django_db
def test_a_slow_llm_is_given_up_at_the_search_s_deadline_not_the_llm_s(llm_stub):
    llm_stub.then(StubReply(content='{"order": [3, 1]}', delay=5))
    hits = _hits(*PASSAGES)
    started = time.monotonic()

    reranked = _rerank("llm", hits)

    assert reranked == hits
    assert time.monotonic() - started < 5  # RERANK_LLM_TIMEOUT_SECONDS (1.5), not LLM_TIMEOUT_SECONDS (30)
    assert LLMCall.objects.get(purpose="rerank").outcome == LLMCall.Outcome.PROVIDER_ERROR
