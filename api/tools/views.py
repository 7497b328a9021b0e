"""GET /api/v1/tools and POST /api/v1/tools/call: the memory tools for an agent's own LLM loop."""

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.authentication import request_agent
from api.conversations.serializers import EXTERNAL_ID_MAX_LENGTH
from api.facts import examples
from conversations.selectors.memory_scope import memory_scope_resolve
from core.api.fields import StrictCharField
from core.api.json_limits import JSONProblem, json_decode, json_unstorable_fields
from formation.tools.base import ToolContext
from formation.tools.registry import tool_call_execute, tool_definitions


@extend_schema_field(
    {
        "oneOf": [
            {"type": "object", "additionalProperties": True},
            {"type": "string", "description": "The JSON text of an object, as models send it."},
        ]
    }
)
class ArgumentsField(serializers.JSONField):
    """An object, or the JSON string of one as OpenAI models send it. A string is decoded here under the body's
    limits (nesting, numbers, what PostgreSQL can store), naming the path inside `arguments`; a string that is not
    JSON at all is left for the tool call to report to the model, which can fix it."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict | str):
            raise serializers.ValidationError("must be an object or a JSON string.")
        if not isinstance(data, str) or not data.strip():
            return data
        try:
            decoded = json_decode(data)
        except JSONProblem as problem:
            if problem.is_syntax:
                return data  # not JSON: the model's mistake, reported to it as ok=false
            raise serializers.ValidationError(_nested(problem.fields)) from problem
        if problems := json_unstorable_fields(decoded):
            raise serializers.ValidationError(_nested(problems))
        return decoded


def _nested(fields: dict[str, list[str]]) -> dict[str, list[str]] | list[str]:
    """Problems at paths inside the decoded arguments, as a field error (the error format prefixes `arguments.`)."""
    if set(fields) <= {"", "non_field_errors"}:
        return [problem for problems in fields.values() for problem in problems]
    return fields


class ToolCallInputSerializer(serializers.Serializer):
    name = StrictCharField(max_length=100)
    arguments = ArgumentsField(required=False, default=dict)
    user = StrictCharField(
        max_length=EXTERNAL_ID_MAX_LENGTH, required=False, help_text="The conversation's end user id."
    )
    session = StrictCharField(
        max_length=EXTERNAL_ID_MAX_LENGTH, required=False, help_text="The conversation's session id."
    )


class ToolCallOutputSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    result = serializers.JSONField(required=False, help_text="When ok: the tool's output for the model.")
    error = serializers.CharField(required=False, help_text="When not ok: what the model should fix.")
    # A declared field named "fields": DRF's metaclass takes it out of the class, so it shadows no Serializer.fields.
    fields = serializers.DictField(  # type: ignore[assignment]
        required=False,
        child=serializers.ListField(child=serializers.CharField()),
        help_text="When not ok: what is wrong with each argument, by its dotted path (`tags.0`).",
    )


class ToolListOutputSerializer(serializers.Serializer):
    tools = serializers.ListField(child=serializers.DictField(), help_text="Pass as `tools` to chat completions.")


class ToolListView(APIView):
    @extend_schema(
        responses=ToolListOutputSerializer,
        summary="OpenAI-format definitions of the memory tools",
        description="search_memory and get_entity (only while the agent's RAG is on), save_memory, update_memory, "
        "delete_memory.",
    )
    def get(self, request: Request) -> Response:
        return Response({"tools": tool_definitions(agent=request_agent(request))})


class ToolCallView(APIView):
    @extend_schema(
        request=ToolCallInputSerializer,
        responses=ToolCallOutputSerializer,
        summary="Execute one memory tool call in a conversation",
        description="A mistake of the model (unknown tool, bad or missing arguments, an id it cannot see) is a "
        "200 with ok=false, an error saying what to fix and `fields` naming each argument and why (`tags.0`): send "
        "the error back as the tool message. A malformed request (no name, arguments neither object nor string, a "
        "session of another user) is a 400.",
        examples=[
            examples.TOOL_CALL_AS_THE_MODEL_SENT_IT,
            examples.TOOL_CALL_SAVING_A_FACT,
        ],
    )
    def post(self, request: Request) -> Response:
        data = ToolCallInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        agent = request_agent(request)
        target = memory_scope_resolve(
            agent=agent,
            user_external_id=data.validated_data.get("user"),
            session_external_id=data.validated_data.get("session"),
        )
        context = ToolContext(
            agent=agent,
            user=target.user,
            user_external_id=target.user.external_id if target.user else data.validated_data.get("user"),
            session=target.session,
        )
        result = tool_call_execute(
            context=context, name=data.validated_data["name"], arguments=data.validated_data["arguments"]
        )
        if result.ok:
            return Response({"ok": True, "result": result.result})
        return Response({"ok": False, "error": result.error, "fields": result.fields})
