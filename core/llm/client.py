"""Calling the LLM for structured output: one place for JSON parsing, validation, the single retry of a malformed
reply (with the parse error), and the record of every call."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from string import Template
from typing import Any, TypeVar

from core.exceptions import ProviderError
from core.llm.providers import LLMReply, LLMRequest, Speed, get_llm_provider
from core.models import LLMCall

logger = logging.getLogger(__name__)

T = TypeVar("T")
# How much of a malformed reply is echoed back when asking the model to repair it.
_REPAIR_ECHO_CHARS = 4000


class MalformedLLMOutput(Exception):
    """The LLM's reply was not valid JSON of the expected shape, even after one retry."""


class OutputInvalid(ValueError):
    """Raised by validators with a message the model can act on."""


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
    *, request: LLMRequest, reply: LLMReply | None, outcome: str, error: str, attempt: int, context: dict
) -> None:
    provider = get_llm_provider()
    LLMCall.objects.create(
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
        job_kind=context.get("job_kind", ""),
        job_id=context.get("job_id"),
    )


def llm_complete_json(
    *,
    purpose: str,
    messages: list[dict[str, str]],
    inputs: dict[str, Any],
    validate: Callable[[Any], T],
    speed: Speed = "fast",
    agent_id: int | None = None,
    job_kind: str = "",
    job_id: int | None = None,
) -> T:
    """Ask for JSON and return validate(parsed). ProviderError propagates (the task retries with backoff);
    a malformed reply is retried once with the error, then MalformedLLMOutput."""
    context = {"agent_id": agent_id, "job_kind": job_kind, "job_id": job_id}
    request = LLMRequest(purpose=purpose, messages=messages, inputs=inputs, speed=speed)
    for attempt in (1, 2):
        try:
            reply = get_llm_provider().complete(request)
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
        try:
            result = validate(_parse(reply.text))
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
        _record(request=request, reply=reply, outcome=LLMCall.Outcome.OK, error="", attempt=attempt, context=context)
        return result
    raise AssertionError("unreachable")
