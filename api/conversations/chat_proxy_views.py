"""`POST /v1/chat/completions`: the OpenAI-compatible chat proxy with memory (formation.services.chat_proxy)."""

from __future__ import annotations

from typing import Any, cast

from django.conf import settings
from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.authentication import request_agent
from api.conversations import examples
from core.api.fields import StrictCharField, StrictFloatField, StrictIntegerField
from facts.selectors.search import TOP_K_MAX
from formation.services.chat_proxy import (
    ChatMemoryOptions,
    ChatRequest,
    chat_completion_proxy,
    chat_completion_proxy_stream,
)

CHAT_ROLES = ("system", "developer", "user", "assistant", "tool", "function")


class ChatMessageSerializer(serializers.Serializer):
    """Validates what the proxy itself reads; every other key of a message is forwarded untouched."""

    role = serializers.ChoiceField(choices=CHAT_ROLES)
    content = serializers.JSONField(required=False, allow_null=True, help_text="A string or a list of content parts.")

    def validate_content(self, value: Any) -> Any:
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(part, dict) and "type" in part for part in value):
            return value
        raise serializers.ValidationError("must be a string or a list of content parts with a 'type'.")


@extend_schema_serializer(component_name="ChatCompletionRequest")
class ChatCompletionInputSerializer(serializers.Serializer):
    model = StrictCharField(required=False, max_length=200, help_text="Default: LLM_SLOW_MODEL.")
    messages = serializers.ListField(child=serializers.DictField(), allow_empty=False)
    stream = serializers.BooleanField(default=False)
    memory_user = StrictCharField(required=False, max_length=200, help_text="End user's external id.")
    memory_session = StrictCharField(
        required=False, max_length=200, help_text="Session to store both turns in; created for memory_user."
    )
    memory_top_k = StrictIntegerField(min_value=0, max_value=TOP_K_MAX, default=5, help_text="Facts to add.")
    memory_min_similarity = StrictFloatField(min_value=-1.0, max_value=1.0, required=False)
    memory_recency_weight = StrictFloatField(min_value=0.0, max_value=1.0, default=0.0)

    def validate_messages(self, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        errors: dict[str, Any] = {}
        for index, message in enumerate(value):
            checked = ChatMessageSerializer(data=message)
            if not checked.is_valid():
                errors[str(index)] = checked.errors
        if errors:
            raise serializers.ValidationError(errors)
        return value


OWN_FIELDS = frozenset(ChatCompletionInputSerializer().fields)


class ChatCompletionsView(APIView):
    @extend_schema(
        operation_id="chat_completions",
        summary="OpenAI-compatible chat completion with memory",
        description=(
            "Adds the always-in-context block and the facts most relevant to the last user message as a system "
            "message (after the caller's own system messages), forwards the request to the configured "
            "OpenAI-compatible LLM (every parameter not listed here is passed through), stores the user's last "
            "message and the reply in `memory_session` (created for `memory_user` on first use) and returns the "
            "reply with a `memory` field. With `stream: true`, server-sent events: the upstream chunks, then one "
            "chunk with no choices carrying `memory`, then `[DONE]`. 503 `llm_unavailable` when no LLM is "
            "configured; 502/504 when the LLM fails (nothing is stored then)."
        ),
        request=ChatCompletionInputSerializer,
        responses={
            200: OpenApiResponse(description="An OpenAI chat completion plus `memory` (or an event stream)."),
            400: OpenApiResponse(description="Invalid input, naming the field."),
            502: OpenApiResponse(description="The upstream LLM failed."),
            503: OpenApiResponse(description="No upstream LLM configured."),
        },
        examples=[
            examples.CHAT_COMPLETIONS_WITH_MEMORY,
            examples.CHAT_COMPLETIONS_REPLY,
        ],
        tags=["chat proxy"],
    )
    def post(self, request: Request) -> Response | StreamingHttpResponse:
        agent = request_agent(request)
        serializer = ChatCompletionInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        chat_request = ChatRequest(
            model=data.get("model") or settings.LLM_SLOW_MODEL,
            messages=data["messages"],
            # The serializer took request.data: a JSON object.
            passthrough={key: value for key, value in cast(dict, request.data).items() if key not in OWN_FIELDS},
            memory=ChatMemoryOptions(
                user_external_id=data.get("memory_user"),
                session_external_id=data.get("memory_session"),
                top_k=data["memory_top_k"],
                min_similarity=data.get("memory_min_similarity"),
                recency_weight=data["memory_recency_weight"],
            ),
        )
        if not data["stream"]:
            return Response(chat_completion_proxy(agent=agent, request=chat_request))
        events = chat_completion_proxy_stream(agent=agent, request=chat_request)
        response = StreamingHttpResponse(events, content_type="text/event-stream")
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"  # nginx would otherwise hold the events back
        return response
