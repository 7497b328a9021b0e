"""Calling the LLM for structured output: one place for JSON parsing, validation, the single retry of a malformed
reply (with the parse error), the provider guard (rate limit, Retry-After, circuit breaker: core.llm.guard), the count
of tokens spent (core.llm.spend) and the record of every call.

A job (formation, consolidation) runs its calls inside `llm_job_calls`: their LLMCall records are collected and
written with one INSERT in the job's final transaction (`llm_calls_write`), and no call or wait runs past the job's
deadline (thread-pool workers enforce no Celery time limit, and the claim of a session treats a run older than twice
the limit as lost). Outside a job each record is written at once."""

from __future__ import annotations

import contextlib
import json
import logging
import random
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from string import Template
from typing import Any, TypeVar

import django.dispatch
from django.conf import settings

from core.exceptions import ProviderError, ProviderPaused, ProviderRateLimited
from core.llm.base import LLMProvider, LLMReply, LLMRequest, Speed
from core.llm.guard import llm_call_admit, llm_call_report, provider_key_for
from core.llm.providers import get_llm_provider
from core.llm.spend import llm_spend_add
from core.models import LLMCall
from core.observability import tracing
from core.observability.instruments import llm_call_observe
from core.runtime.db import release_connection_while_waiting
from core.runtime.request_load import cpu_work_paused

logger = logging.getLogger(__name__)

T = TypeVar("T")
# How much of a malformed reply is echoed back when asking the model to repair it.
_REPAIR_ECHO_CHARS = 4000
# Tokens a reply is expected to add to its prompt, for the rate limiter's estimate before the call.
_COMPLETION_ALLOWANCE = 400
# Sent when the circuit breaker closes, so that work paused meanwhile is queued again at once.
llm_provider_recovered = django.dispatch.Signal()


class MalformedLLMOutput(Exception):
    """The LLM's reply was not valid JSON of the expected shape, even after one retry."""


class OutputInvalid(ValueError):
    """Raised by validators with a message the model can act on."""


@dataclass
class _JobCalls:
    records: list[LLMCall] = field(default_factory=list)
    deadline: float | None = None  # time.monotonic()


_job_calls: ContextVar[_JobCalls | None] = ContextVar("llm_job_calls", default=None)


@contextlib.contextmanager
def llm_job_calls(*, time_limit_seconds: float | None) -> Iterator[list[LLMCall]]:
    """Collect the LLMCall records of the calls made in the block (the list yielded), and keep every call and wait
    within `time_limit_seconds` from now."""
    job = _JobCalls(deadline=time.monotonic() + time_limit_seconds if time_limit_seconds else None)
    token = _job_calls.set(job)
    try:
        yield job.records
    finally:
        _job_calls.reset(token)


def llm_calls_write(*, records: list[LLMCall]) -> None:
    """Write collected call records in one statement (inside the job's final transaction, or when it fails)."""
    if records:
        LLMCall.objects.bulk_create(records)
        records.clear()


def prompt_render(*, path: Path, values: dict[str, str]) -> list[dict[str, str]]:
    """A prompt file holds a system part and a user part separated by a line `---user---`; `$name` placeholders are
    filled from values (string.Template, so JSON braces in the prompt need no escaping)."""
    system, _, user = path.read_text().partition("\n---user---\n")
    return [
        {"role": "system", "content": Template(system).substitute(values).strip()},
        {"role": "user", "content": Template(user).substitute(values).strip()},
    ]


def _parse(text: str) -> Any:
    text = text.strip()
    if text.startswith("```"):
        text = text.strip("`")
        text = text[text.find("\n") + 1 :] if "\n" in text else text
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise OutputInvalid(f"the reply is not valid JSON ({error.msg} at position {error.pos})") from error


def _record(
    *,
    request: LLMRequest,
    reply: LLMReply | None,
    outcome: str,
    error: str,
    attempt: int,
    context: dict,
    rule_violations: dict[str, int] | None = None,
) -> None:
    provider = get_llm_provider()
    call = LLMCall(
        agent_id=context.get("agent_id"),
        purpose=request.purpose,
        provider=provider.name,
        model=reply.model if reply else getattr(provider, "models", {}).get(request.speed, ""),
        prompt_tokens=reply.prompt_tokens if reply else 0,
        completion_tokens=reply.completion_tokens if reply else 0,
        latency_ms=reply.latency_ms if reply else 0,
        outcome=outcome,
        error=error[:2000],
        attempt=attempt,
        rule_violations=rule_violations or {},
        job_kind=context.get("job_kind", ""),
        job_id=context.get("job_id"),
    )
    llm_call_observe(
        provider=call.provider,
        purpose=call.purpose,
        outcome=call.outcome,
        prompt_tokens=call.prompt_tokens,
        completion_tokens=call.completion_tokens,
        latency_ms=call.latency_ms,
    )
    job = _job_calls.get()
    if job is None:
        call.save()
    else:
        job.records.append(call)


def _remaining_seconds() -> float | None:
    job = _job_calls.get()
    return None if job is None or job.deadline is None else job.deadline - time.monotonic()


def _wait(seconds: float, *, why: str) -> None:
    """Sleep before trying again, unless that would outlast the job: then the task retries later instead."""
    remaining = _remaining_seconds()
    if remaining is not None and seconds > remaining:
        raise ProviderRateLimited(f"{why}: {seconds:.1f}s to wait, past the job's time limit", retry_after=seconds)
    release_connection_while_waiting()
    with cpu_work_paused():
        time.sleep(seconds)


def _estimated_tokens(request: LLMRequest) -> int:
    return sum(len(message.get("content") or "") for message in request.messages) // 4 + _COMPLETION_ALLOWANCE


def _complete(*, provider: LLMProvider, request: LLMRequest, attempt: int, context: dict) -> LLMReply:
    """One completion. A remote provider's call is admitted by the shared guard first (and waits for the rate
    limit); a 429 is retried after its Retry-After, each one recorded; an open circuit breaker raises
    ProviderPaused without calling."""
    if not provider.remote:
        return provider.complete(request)
    key = provider_key_for(provider_name=provider.name)
    estimated = _estimated_tokens(request)
    rate_limited = 0
    while True:
        admission = llm_call_admit(provider_key=key, estimated_tokens=estimated)
        if admission.verdict == "open":
            raise ProviderPaused(
                f"the LLM provider is failing: calls paused for {admission.seconds:.0f}s (circuit breaker open)",
                retry_in=admission.seconds,
            )
        if admission.verdict == "wait":
            _wait(admission.seconds, why="client-side LLM rate limit")
            continue
        remaining = _remaining_seconds()
        if remaining is not None and remaining < 1:
            raise ProviderError("the job's time limit was reached before its LLM call")
        timeout = settings.LLM_TIMEOUT_SECONDS if remaining is None else min(settings.LLM_TIMEOUT_SECONDS, remaining)
        release_connection_while_waiting()
        try:
            with cpu_work_paused():
                reply = provider.complete(replace(request, timeout=timeout))
        except ProviderRateLimited as error:
            llm_call_report(provider_key=key, outcome="answered", token_correction=-estimated)
            _record(
                request=request,
                reply=None,
                outcome=LLMCall.Outcome.RATE_LIMITED,
                error=str(error),
                attempt=attempt,
                context=context,
            )
            rate_limited += 1
            if rate_limited > settings.LLM_RATE_LIMITED_RETRIES:
                raise
            delay = error.retry_after if error.retry_after is not None else random.uniform(1, 2**rate_limited)
            _wait(delay, why="the provider's Retry-After")
            continue
        except ProviderError:
            llm_call_report(provider_key=key, outcome="failure", token_correction=-estimated)
            raise
        used = reply.prompt_tokens + reply.completion_tokens
        if llm_call_report(provider_key=key, outcome="answered", token_correction=used - estimated) == "closed":
            llm_provider_recovered.send(sender=provider.__class__, provider_key=key)
        return reply


def llm_complete_json(
    *,
    purpose: str,
    messages: list[dict[str, str]],
    inputs: dict[str, Any],
    validate: Callable[[Any], T],
    schema: dict[str, Any] | None = None,
    rules: Callable[[Any], dict[str, int]] | None = None,
    speed: Speed = "fast",
    agent_id: int | None = None,
    job_kind: str = "",
    job_id: int | None = None,
) -> T:
    """Ask for JSON (in `schema`, where the endpoint takes one) and return validate(parsed). ProviderError propagates
    (the task retries with backoff); a malformed reply is retried once with the error, then MalformedLLMOutput.
    `rules` counts what a valid reply did against the prompt's rules ({rule: items}, e.g. a fact over the word limit,
    which the step then drops or cuts): kept on the call's record, so that each step's rule-following is visible."""
    context = {"agent_id": agent_id, "job_kind": job_kind, "job_id": job_id}
    request = LLMRequest(purpose=purpose, messages=messages, inputs=inputs, speed=speed, schema=schema)
    provider = get_llm_provider()
    for attempt in (1, 2):
        try:
            with tracing.span(f"llm {purpose}", **{"llm.purpose": purpose, "llm.provider": provider.name}):
                reply = _complete(provider=provider, request=request, attempt=attempt, context=context)
        except (ProviderPaused, ProviderRateLimited):
            raise  # nothing was sent, or each 429 is recorded already
        except ProviderError as error:
            _record(
                request=request,
                reply=None,
                outcome=LLMCall.Outcome.PROVIDER_ERROR,
                error=str(error),
                attempt=attempt,
                context=context,
            )
            raise
        llm_spend_add(agent_id=agent_id, tokens=reply.prompt_tokens + reply.completion_tokens)
        try:
            parsed = _parse(reply.text)
            result = validate(parsed)
        except (OutputInvalid, ValueError, TypeError, KeyError) as error:
            _record(
                request=request,
                reply=reply,
                outcome=LLMCall.Outcome.MALFORMED,
                error=str(error),
                attempt=attempt,
                context=context,
            )
            if attempt == 2:
                raise MalformedLLMOutput(f"{purpose}: {error}") from error
            request = LLMRequest(
                purpose=purpose,
                inputs=inputs | {"previous_error": str(error)},
                speed=speed,
                schema=schema,
                messages=[
                    *messages,
                    {"role": "assistant", "content": reply.text[:_REPAIR_ECHO_CHARS]},
                    {
                        "role": "user",
                        "content": f"That reply was not usable: {error}. "
                        "Reply again with only the JSON object, in the schema given.",
                    },
                ],
            )
            continue
        _record(
            request=request,
            reply=reply,
            outcome=LLMCall.Outcome.OK,
            error="",
            attempt=attempt,
            context=context,
            rule_violations={rule: count for rule, count in (rules(parsed) if rules else {}).items() if count},
        )
        return result
    raise AssertionError("unreachable")
