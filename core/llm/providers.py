"""LLM providers behind one small interface, chosen by settings (LLM_PROVIDER): `openai` is built here; any other
name is a class the settings give by dotted path (LLM_PROVIDER_CLASSES: `offline`, the rule-based extractor, is
formation's), so core imports no provider that reads English.

A request carries both the rendered prompt (for a real model) and the structured inputs it was rendered from (for
the deterministic offline provider and for test fakes). Providers return raw text; parsing, validation, retries of
malformed output and the call records live in core.llm.client, the same for every provider."""

from __future__ import annotations

import logging
import time
from functools import lru_cache
from typing import Any, Literal, cast, get_args

import openai
from django.conf import settings
from django.utils.module_loading import import_string
from openai.types.chat import ChatCompletionMessageParam

from core.exceptions import ProviderError, ProviderRateLimited
from core.llm.base import LLMProvider, LLMReply, LLMRequest

logger = logging.getLogger(__name__)


def retry_after_seconds(headers: Any) -> float | None:
    """The delay a 429 asks for: OpenAI's `retry-after-ms`, else `Retry-After` in seconds (an HTTP date is rare
    enough from LLM APIs to be treated as absent)."""
    for name, scale in (("retry-after-ms", 1000), ("retry-after", 1)):
        value = headers.get(name) if headers is not None else None
        try:
            seconds = float(value) / scale if value is not None else None
        except ValueError:
            continue
        if seconds is not None and seconds >= 0:
            return seconds
    return None


StructuredOutput = Literal["json_schema", "json_object_schema", "json_object"]
STRUCTURED_OUTPUT_MODES: tuple[str, ...] = get_args(StructuredOutput)


def response_format_for(*, request: LLMRequest, mode: StructuredOutput) -> dict[str, Any] | None:
    """The response_format of a JSON request in each endpoint's dialect:
    - json_schema: OpenAI's {"type": "json_schema", ...} (OpenAI, vLLM, llama.cpp's llama-server, Ollama);
    - json_object_schema: {"type": "json_object", "schema": ...}, the dialect of llama-cpp-python's server, which
      compiles the schema to a grammar, so that a small model cannot produce anything else;
    - json_object: JSON mode without a schema (any endpoint with JSON mode).
    Not strict: a strict OpenAI schema must make every property required, and optional ones ("key") are wanted."""
    if not request.json_reply:
        return None
    if request.schema is None or mode == "json_object":
        return {"type": "json_object"}
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": request.schema}
    return {
        "type": "json_schema",
        "json_schema": {"name": request.purpose, "schema": request.schema, "strict": False},
    }


class OpenAICompatibleLLM(LLMProvider):
    name = "openai"
    remote = True

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        fast_model: str,
        slow_model: str,
        timeout: float,
        structured_output: StructuredOutput = "json_schema",
        max_completion_tokens: int = 0,
    ) -> None:
        # Retries are ours (Celery with backoff and jitter), so the SDK's own are off: one attempt, one record.
        self._client = openai.OpenAI(
            base_url=base_url or None, api_key=api_key or "not-needed", timeout=timeout, max_retries=0
        )
        self.models = {"fast": fast_model, "slow": slow_model}
        self.structured_output = structured_output
        self.max_completion_tokens = max_completion_tokens

    def complete(self, request: LLMRequest) -> LLMReply:
        response_format = response_format_for(request=request, mode=self.structured_output)
        try:
            return self._complete(request=request, response_format=response_format)
        except (openai.BadRequestError, openai.UnprocessableEntityError) as error:
            if response_format in (None, {"type": "json_object"}):
                raise ProviderError(f"{type(error).__name__}: {error}") from error
            # An endpoint without schemas (or in another dialect) refuses the request (400, 422) rather than ignore
            # them: this process falls back to plain JSON mode, and the step's validation and retry carry the rest.
            logger.warning("the LLM endpoint refused a JSON schema (%s): JSON mode from now on", error)
            self.structured_output = "json_object"
            return self._complete(request=request, response_format={"type": "json_object"})

    def _complete(self, *, request: LLMRequest, response_format: dict[str, Any] | None) -> LLMReply:
        model = self.models[request.speed]
        started = time.monotonic()
        extra: dict[str, Any] = {"response_format": response_format} if response_format else {}
        if request.json_reply and self.max_completion_tokens:
            extra["max_tokens"] = self.max_completion_tokens
        if request.timeout is not None:
            extra["timeout"] = request.timeout
        try:
            completion = self._client.chat.completions.create(
                model=model,
                # Plain {"role", "content"} dicts: what the SDK's message TypedDicts describe.
                messages=cast(list[ChatCompletionMessageParam], request.messages),
                temperature=0,
                **extra,
            )
        except (openai.BadRequestError, openai.UnprocessableEntityError):
            raise  # complete() decides
        except openai.RateLimitError as error:
            raise ProviderRateLimited(
                f"RateLimitError: {error}", retry_after=retry_after_seconds(error.response.headers)
            ) from error
        except openai.OpenAIError as error:
            raise ProviderError(f"{type(error).__name__}: {error}") from error
        latency_ms = int((time.monotonic() - started) * 1000)
        if not completion.choices:
            raise ProviderError("the LLM returned no choices")
        usage = completion.usage
        return LLMReply(
            text=completion.choices[0].message.content or "",
            model=completion.model or model,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            latency_ms=latency_ms,
        )


def build_llm_provider(name: str) -> LLMProvider:
    if name == "openai":
        if settings.LLM_STRUCTURED_OUTPUT not in STRUCTURED_OUTPUT_MODES:
            raise ValueError(
                f"unknown LLM_STRUCTURED_OUTPUT {settings.LLM_STRUCTURED_OUTPUT!r}: "
                f"use one of {', '.join(STRUCTURED_OUTPUT_MODES)}"
            )
        return OpenAICompatibleLLM(
            base_url=settings.LLM_BASE_URL,
            api_key=settings.LLM_API_KEY,
            fast_model=settings.LLM_FAST_MODEL,
            slow_model=settings.LLM_SLOW_MODEL,
            timeout=settings.LLM_TIMEOUT_SECONDS,
            structured_output=settings.LLM_STRUCTURED_OUTPUT,
            max_completion_tokens=settings.LLM_MAX_COMPLETION_TOKENS,
        )
    if name == "local":
        raise ValueError(
            "LLM_PROVIDER=local is started by `make run` (devstack), which serves the model and points "
            "the openai provider at it; elsewhere run a llama.cpp server and set LLM_PROVIDER=openai, LLM_BASE_URL"
        )
    if name in settings.LLM_PROVIDER_CLASSES:
        return import_string(settings.LLM_PROVIDER_CLASSES[name])()
    known = " or ".join(repr(known) for known in ("openai", *settings.LLM_PROVIDER_CLASSES))
    raise ValueError(f"unknown LLM_PROVIDER {name!r}: use {known}")


@lru_cache(maxsize=2)
def _cached_llm_provider(name: str) -> LLMProvider:
    return build_llm_provider(name)


_override: LLMProvider | None = None


def get_llm_provider() -> LLMProvider:
    return _override or _cached_llm_provider(settings.LLM_PROVIDER)


def set_llm_provider_override(provider: LLMProvider | None) -> None:
    """The seam tests use to put a scripted fake in place of the LLM (in-process workers included)."""
    global _override
    _override = provider
