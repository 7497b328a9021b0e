"""What every LLM provider is: a request (purpose, messages, the structured inputs, the reply's schema), a reply, and
the interface providers implement (providers.py: the OpenAI-compatible one; formation/offline/provider.py: the
rule-based stand-in, chosen through the settings' LLM_PROVIDER_CLASSES)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Literal

Speed = Literal["fast", "slow"]


@dataclass(frozen=True)
class LLMRequest:
    purpose: str
    messages: list[dict[str, str]]
    inputs: dict[str, Any] = field(default_factory=dict)
    speed: Speed = "fast"
    json_reply: bool = True
    # The JSON schema of the reply, sent as the request's response_format where the endpoint takes one
    # (LLM_STRUCTURED_OUTPUT); the reply is validated by the step all the same.
    schema: dict[str, Any] | None = None
    timeout: float | None = None  # seconds; None: LLM_TIMEOUT_SECONDS


@dataclass(frozen=True)
class LLMReply:
    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: int


class LLMProvider(ABC):
    name: str
    # A provider across the network: its calls go through the shared rate limiter and circuit breaker.
    remote: bool = False

    @abstractmethod
    def complete(self, request: LLMRequest) -> LLMReply:
        """Raise ProviderError on network errors, timeouts and 5xx; return whatever text the model produced."""
