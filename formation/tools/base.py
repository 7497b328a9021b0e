"""What every memory tool is made of: the conversation it runs in, its result, the error a model can fix, and the
declaration of a tool (its name, description, arguments and run). A tool's arguments are declared once, as the
serializer that validates them; the JSON Schema a model is shown is read from it (core.api.tool_schema)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rest_framework import serializers

from agents.models import Agent, EndUser
from conversations.models import Session
from core.api.errors import field_errors_flatten
from core.api.tool_schema import serializer_json_schema


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
    fields: dict[str, list[str]] = field(default_factory=dict)  # when not ok: what is wrong, by argument


class ToolError(Exception):
    """Something the model can fix; the message tells it what, `fields` which argument (by its dotted path:
    `tags.0`) and why."""

    def __init__(self, message: str, *, fields: dict[str, list[str]] | None = None) -> None:
        super().__init__(message)
        self.fields = fields or {}


@dataclass(frozen=True)
class Tool:
    """One memory tool. `arguments` validates a call's arguments and is what the model is shown of them (OpenAI's
    function `parameters`), read when the definitions are asked for: help texts that quote a setting quote it then."""

    name: str
    description: str
    arguments: type[serializers.Serializer]
    run: Callable[[ToolContext, dict], dict]
    reads_memory: bool = False  # offered, and run, only while the agent's RAG is on

    def definition(self) -> dict[str, Any]:
        """The tool in OpenAI's `tools` format."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": serializer_json_schema(self.arguments),
            },
        }


def arguments_validate(serializer_class: type[serializers.Serializer], arguments: dict) -> dict:
    """The arguments as the tool's serializer validates them; ToolError naming each argument that is unknown or
    invalid, and why, by its dotted path ("tags.0: Ensure this field has no more than 100 characters.")."""
    unknown = sorted(set(arguments) - set(serializer_class().fields))
    if unknown:
        raise ToolError(
            f"unknown argument(s): {', '.join(unknown)}.", fields={name: ["unknown argument"] for name in unknown}
        )
    data = serializer_class(data=arguments)
    if not data.is_valid():
        fields = field_errors_flatten(data.errors)
        problems = "; ".join(f"{path}: {' '.join(errors)}" for path, errors in fields.items())
        raise ToolError(f"invalid arguments: {problems}", fields=fields)
    return dict(data.validated_data)
