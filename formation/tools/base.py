"""What every memory tool is made of: the conversation it runs in, its result, the error a model can fix, and the
declaration of a tool (its name, description, arguments and run)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rest_framework import serializers

from agents.models import Agent, EndUser
from conversations.models import Session


@dataclass(frozen=True)
class ToolContext:
    """The conversation a tool call happens in. `user_external_id` is kept for a user not stored yet, whom saving a
    user fact creates."""

    agent: Agent
    user: EndUser | None
    user_external_id: str | None
    session: Session | None


@dataclass(frozen=True)
class ToolResult:
    ok: bool
    result: dict[str, Any] | None = None
    error: str | None = None


class ToolError(Exception):
    """Something the model can fix; the message tells it what."""


@dataclass(frozen=True)
class Tool:
    """One memory tool. `arguments` validates a call's arguments; `parameters()` gives the JSON Schema of the same
    arguments that the model is shown (OpenAI's function `parameters`: properties and the required ones), read when
    the definitions are asked for, as the settings it quotes are then."""

    name: str
    description: str
    parameters: Callable[[], dict[str, Any]]
    arguments: type[serializers.Serializer]
    run: Callable[[ToolContext, dict], dict]
    reads_memory: bool = False  # offered, and run, only while the agent's RAG is on

    def definition(self) -> dict[str, Any]:
        """The tool in OpenAI's `tools` format."""
        parameters = self.parameters()
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": parameters["properties"],
                    "required": parameters["required"],
                    "additionalProperties": False,
                },
            },
        }


def arguments_validate(serializer_class: type[serializers.Serializer], arguments: dict) -> dict:
    """The arguments as the tool's serializer validates them; ToolError naming what is unknown or invalid."""
    unknown = sorted(set(arguments) - set(serializer_class().fields))
    if unknown:
        raise ToolError(f"unknown argument(s): {', '.join(unknown)}.")
    data = serializer_class(data=arguments)
    if not data.is_valid():
        problems = "; ".join(f"{field}: {' '.join(map(str, errors))}" for field, errors in data.errors.items())
        raise ToolError(f"invalid arguments: {problems}")
    return data.validated_data
