"""The MCP tool registry over REST, for the stdio server of the client package (`agent-memory-mcp`), which talks to
the service through the REST API: GET /api/v1/mcp/tools lists the tools as MCP defines them, POST
/api/v1/mcp/tools/call runs one. Same registry, same rules as /mcp; the end user may be pinned with the same headers."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.authentication import request_agent
from api.tools.views import ArgumentsField
from core.api.fields import StrictCharField
from core.exceptions import ApplicationError
from mcp_server.tools import (
    SESSION_HEADER,
    USER_HEADER,
    Caller,
    MemoryToolError,
    memory_tool_call,
    memory_tool_definitions,
    pinned_id,
)


def _caller(request: Request) -> Caller:
    try:
        user = pinned_id(header=USER_HEADER, value=request.headers.get(USER_HEADER))
        session = pinned_id(header=SESSION_HEADER, value=request.headers.get(SESSION_HEADER))
    except MemoryToolError as error:
        raise ApplicationError(error.message, fields=error.fields) from error
    return Caller(agent=request_agent(request), user=user, session=session)


class MCPToolListOutputSerializer(serializers.Serializer):
    tools = serializers.ListField(
        child=serializers.DictField(), help_text="MCP Tool objects: name, title, description, inputSchema, annotations."
    )


class MCPToolCallInputSerializer(serializers.Serializer):
    name = StrictCharField(max_length=100)
    # An object, or its JSON text as models write it: the same field as /api/v1/tools/call.
    arguments = ArgumentsField(required=False, default=dict)


class MCPToolCallOutputSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    result = serializers.JSONField(required=False)
    error = serializers.CharField(required=False, help_text="When not ok: what to fix, naming the argument.")
    # A declared field named "fields": DRF's metaclass takes it out of the class, so it shadows no Serializer.fields.
    fields = serializers.DictField(  # type: ignore[assignment]
        required=False, child=serializers.ListField(child=serializers.CharField())
    )


class MCPToolListView(APIView):
    @extend_schema(
        responses=MCPToolListOutputSerializer,
        summary="The MCP server's tools, as MCP tools/list gives them",
        description=f"Without an {USER_HEADER} (or {SESSION_HEADER}) header each tool takes `user` and `session` "
        "arguments; with one, the calls are about that user and the tools do not offer them.",
    )
    def get(self, request: Request) -> Response:
        return Response({"tools": memory_tool_definitions(caller=_caller(request))})


class MCPToolCallView(APIView):
    @extend_schema(
        request=MCPToolCallInputSerializer,
        responses=MCPToolCallOutputSerializer,
        summary="Run one MCP tool call",
        description="A mistake of the caller's model (unknown tool, wrong or missing argument, an id it cannot see) "
        "is a 200 with ok=false, an error naming the argument and `fields`: what MCP returns as a tool error.",
    )
    def post(self, request: Request) -> Response:
        data = MCPToolCallInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        outcome = memory_tool_call(
            caller=_caller(request), name=data.validated_data["name"], arguments=data.validated_data["arguments"]
        )
        if outcome.ok:
            return Response({"ok": True, "result": outcome.result})
        return Response({"ok": False, "error": outcome.error, "fields": outcome.fields})
