"""The optional rerank step of search (docs/decisions/0060-a-reranker-after-fusion.md): the top of a fused list,
reordered by a reranker, either a cross-encoder behind the HTTP rerank API that TEI, Infinity, vLLM, Jina and Cohere
serve, or the configured LLM ranking the passages listwise. Which one an agent's searches use is the agent's
`reranker` setting (off by default).

The step never fails a search: a reranker that times out, answers with an error status, refuses the connection or
replies with something that is not a ranking of the passages it was given leaves the fused order, logs a warning and
counts the outcome (memory_rerank_total). Its time is the Server-Timing stage `rerank`."""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import Field, dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

import httpx
from django.conf import settings
from django.db import models

from core.exceptions import ProviderError
from core.llm.client import (
    MalformedLLMOutput,
    OutputInvalid,
    llm_calls_write,
    llm_complete_json,
    llm_job_calls,
    prompt_render,
)
from core.llm.providers import get_llm_provider
from core.observability.metrics import metrics_enabled, rerank_outcomes
from core.runtime.timing import stage_timed

logger = logging.getLogger(__name__)

# Each passage is cut to this many characters before it is sent: about 250 tokens, within a cross-encoder's window
# (512 tokens for the BGE rerankers) with the query, and a bounded listwise prompt.
PASSAGE_MAX_CHARS = 1000
HTTP_FORMATS = ("cohere", "tei")
PROMPT = Path(__file__).resolve().parent / "prompts" / "rerank.txt"
LLM_PURPOSE = "rerank"
_REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"order": {"type": "array", "items": {"type": "integer"}}},
    "required": ["order"],
    "additionalProperties": False,
}


class Reranker(models.TextChoices):
    OFF = "off", "off: the fused order"
    HTTP = "http", "a rerank server (RERANK_URL: TEI, Infinity, vLLM, Jina, Cohere)"
    LLM = "llm", "the configured LLM, ranking the passages listwise"


class Outcome(models.TextChoices):
    """What one rerank step did: the label `outcome` of memory_rerank_total."""

    RERANKED = "reranked"
    TIMEOUT = "timeout"
    ERROR = "error"  # an error status, a refused connection, a provider error
    MALFORMED = "malformed"  # not a ranking of the passages given
    UNCONFIGURED = "unconfigured"  # http without RERANK_URL, llm without an LLM
    HELD = "held"  # llm while an LLM hold applies to the agent (its budget, the provider's breaker)


class _Failed(Exception):
    def __init__(self, outcome: Outcome, detail: str) -> None:
        super().__init__(detail)
        self.outcome = outcome


@dataclass(frozen=True)
class Ranking:
    """The passages' indexes, best first (each once, all of them), and the reranker's score of each it scored."""

    order: list[int]
    scores: dict[int, float]


class RerankableHit(Protocol):
    """A search hit the step can reorder: a dataclass with the two fields it fills."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def rerank_rank(self) -> int | None: ...

    @property
    def rerank_score(self) -> float | None: ...


H = TypeVar("H", bound=RerankableHit)


def rerank_outcome_count(*, reranker: str, outcome: Outcome) -> None:
    if metrics_enabled():
        rerank_outcomes.labels(reranker, outcome.value).inc()


def rerank_depth(*, reranker: str, top_k: int) -> int:
    """How many of the fused list a search ranks before the step: the RERANK_TOP_N it reranks when it does."""
    return top_k if reranker == Reranker.OFF else max(top_k, settings.RERANK_TOP_N)


def hits_reranked(
    *,
    reranker: str,
    query: str,
    hits: Sequence[H],
    text: Callable[[H], str],
    band: Callable[[H], int] | None = None,
    agent_id: int | None,
) -> list[H]:
    """`hits` (fused order, best first) with their first RERANK_TOP_N in the reranker's order, each with its place
    (`rerank_rank`) and, from a rerank server, its score; the rest after them as they were. `band` keeps what the
    search decided before relevance: a hit of a lower band stays above every hit of a higher one (world time's tiers),
    the reranker orders within a band. Off, or when the reranker fails: `hits` as they were."""
    window = list(hits[: settings.RERANK_TOP_N])
    if reranker == Reranker.OFF or len(window) < 2:
        return list(hits)
    ranking = passages_rank(reranker=reranker, query=query, passages=[text(hit) for hit in window], agent_id=agent_id)
    if ranking is None:
        return list(hits)
    place = {index: rank for rank, index in enumerate(ranking.order, start=1)}
    reordered = sorted(range(len(window)), key=lambda i: (band(window[i]) if band else 0, place[i]))
    reranked = [replace(window[i], rerank_rank=place[i], rerank_score=ranking.scores.get(i)) for i in reordered]
    return reranked + list(hits[len(window) :])


def passages_rank(*, reranker: str, query: str, passages: Sequence[str], agent_id: int | None) -> Ranking | None:
    """The reranker's order of `passages` for `query`, or None (the caller keeps its order) when it failed."""
    cut = [passage[:PASSAGE_MAX_CHARS] for passage in passages]
    with stage_timed("rerank"):
        try:
            if reranker == Reranker.HTTP:
                ranking = _http_rank(query=query, passages=cut)
            elif reranker == Reranker.LLM:
                ranking = _llm_rank(query=query, passages=cut, agent_id=agent_id)
            else:
                raise _Failed(Outcome.UNCONFIGURED, f"unknown reranker {reranker!r}")
        except _Failed as failure:
            _failure_log(reranker=reranker, failure=failure)
            rerank_outcome_count(reranker=reranker, outcome=failure.outcome)
            return None
    rerank_outcome_count(reranker=reranker, outcome=Outcome.RERANKED)
    return ranking


_unconfigured_warned: set[str] = set()


def _failure_log(*, reranker: str, failure: _Failed) -> None:
    message = "rerank (%s) failed, the fused order is kept: %s: %s"
    if failure.outcome != Outcome.UNCONFIGURED:
        logger.warning(message, reranker, failure.outcome.value, failure)
    elif reranker not in _unconfigured_warned:  # a setting missing: once per process, not once per search
        _unconfigured_warned.add(reranker)
        logger.warning(message, reranker, failure.outcome.value, failure)


# --- A rerank server ---------------------------------------------------------------------------------------------

_client_lock = threading.Lock()
_client: httpx.Client | None = None


def _http_client() -> httpx.Client:
    """One client per process: its pool keeps the connection to the server alive between searches (a TLS handshake
    to a hosted reranker costs more than the reranking of a few passages)."""
    global _client
    with _client_lock:
        if _client is None:
            _client = httpx.Client(follow_redirects=False)
        return _client


def _http_rank(*, query: str, passages: list[str]) -> Ranking:
    if not settings.RERANK_URL:
        raise _Failed(Outcome.UNCONFIGURED, "RERANK_URL is not set")
    if settings.RERANK_API_FORMAT not in HTTP_FORMATS:
        raise _Failed(Outcome.UNCONFIGURED, f"RERANK_API_FORMAT must be one of {', '.join(HTTP_FORMATS)}")
    tei = settings.RERANK_API_FORMAT == "tei"
    if tei:
        body: dict[str, Any] = {"query": query, "texts": passages, "truncate": True}
    else:
        body = {"query": query, "documents": passages, "top_n": len(passages)}
        if settings.RERANK_MODEL:
            body["model"] = settings.RERANK_MODEL
    headers = {"Authorization": f"Bearer {settings.RERANK_API_KEY}"} if settings.RERANK_API_KEY else {}
    try:
        response = _http_client().post(
            settings.RERANK_URL, json=body, headers=headers, timeout=settings.RERANK_TIMEOUT_SECONDS
        )
    except httpx.TimeoutException as error:
        raise _Failed(Outcome.TIMEOUT, f"no reply within {settings.RERANK_TIMEOUT_SECONDS}s ({error!r})") from error
    except httpx.HTTPError as error:
        raise _Failed(Outcome.ERROR, repr(error)) from error
    if response.status_code != 200:
        raise _Failed(Outcome.ERROR, f"status {response.status_code}: {response.text[:200]}")
    try:
        reply = response.json()
        rows = reply if tei else reply["results"]
        scored = [(row["index"], row["score" if tei else "relevance_score"]) for row in rows]
    except (ValueError, TypeError, KeyError) as error:
        raise _Failed(Outcome.MALFORMED, f"not a rerank reply: {error!r}: {response.text[:200]}") from error
    return _scored_ranking(scored=scored, count=len(passages))


def _scored_ranking(*, scored: list[tuple[Any, Any]], count: int) -> Ranking:
    """Best score first (ties in the fused order); every passage scored once, or the reply is not about them."""
    indexes = [index for index, _ in scored]
    if sorted(i for i in indexes if type(i) is int) != list(range(count)):
        raise _Failed(Outcome.MALFORMED, f"indexes {indexes[:30]} are not each of the {count} passages once")
    scores = {}
    for index, score in scored:
        if type(score) not in (int, float) or not math.isfinite(score):
            raise _Failed(Outcome.MALFORMED, f"score {score!r} of passage {index} is not a number")
        scores[index] = float(score)
    return Ranking(order=sorted(scores, key=lambda i: (-scores[i], i)), scores=scores)


# --- The LLM, listwise -------------------------------------------------------------------------------------------


def _llm_rank(*, query: str, passages: list[str], agent_id: int | None) -> Ranking:
    if get_llm_provider().name == "offline":
        raise _Failed(Outcome.UNCONFIGURED, "no LLM is configured (LLM_PROVIDER=offline)")
    numbered = "\n".join(f"[{number}] {' '.join(passage.split())}" for number, passage in enumerate(passages, 1))
    messages = prompt_render(path=PROMPT, values={"query": " ".join(query.split()), "passages": numbered})

    def validate(reply: Any) -> list[int]:
        return _listwise_order(reply=reply, count=len(passages))

    # A deadline for the call, its repair and any wait for the rate limiter: the search is waiting.
    with llm_job_calls(time_limit_seconds=settings.RERANK_LLM_TIMEOUT_SECONDS) as records:
        try:
            order = llm_complete_json(
                purpose=LLM_PURPOSE,
                messages=messages,
                inputs={"query": query, "passages": len(passages)},
                validate=validate,
                schema=_REPLY_SCHEMA,
                agent_id=agent_id,
            )
        except MalformedLLMOutput as error:
            raise _Failed(Outcome.MALFORMED, str(error)) from error
        except ProviderError as error:  # paused, rate limited past the deadline, timed out, 5xx
            raise _Failed(Outcome.ERROR, repr(error)) from error
        except Exception as error:  # a provider that cannot rank: the search must not fail for it
            raise _Failed(Outcome.ERROR, repr(error)) from error
        finally:
            llm_calls_write(records=records)
    return Ranking(order=order, scores={})


def _listwise_order(*, reply: Any, count: int) -> list[int]:
    """The passages' indexes (0-based) in the order the model gave their numbers (1-based); the ones it left out
    follow in the fused order. A number given twice or outside the list: the reply is not a ranking of them."""
    numbers = reply.get("order") if isinstance(reply, dict) else None
    if not isinstance(numbers, list) or not numbers:
        raise OutputInvalid('give "order": the passage numbers, most relevant first')
    if any(type(n) is not int or not 1 <= n <= count for n in numbers):
        raise OutputInvalid(f"each number in order must be a passage number, 1 to {count}")
    if len(set(numbers)) != len(numbers):
        raise OutputInvalid("each passage number at most once in order")
    given = [n - 1 for n in numbers]
    return given + [i for i in range(count) if i not in set(given)]
