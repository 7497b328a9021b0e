"""Memory reads for one prompt: the always-in-context block and the memory bundle. Views only parse, call a
selector and render."""

from __future__ import annotations

from dataclasses import asdict

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_serializer,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.authentication import request_agent
from api.reflections import examples
from conversations.selectors.memory_scope import memory_scope_resolve
from core.api.fields import StrictCharField, StrictFloatField, StrictIntegerField
from facts.selectors.search import TOP_K_MAX
from reflections.selectors.bundle import BUNDLE_PART_NAMES, DEFAULT_PART_TOKEN_LIMITS, BundleLimits, memory_bundle_build
from reflections.selectors.context import MemoryContextDisabled, memory_context_get

ERROR_RESPONSE = inline_serializer(
    name="Error",
    fields={
        "error": inline_serializer(
            name="ErrorBody",
            fields={
                "code": serializers.CharField(),
                "message": serializers.CharField(),
                "fields": serializers.DictField(child=serializers.ListField(child=serializers.CharField())),
            },
        )
    },
)


class ScopePartSerializer(serializers.Serializer):
    blob = serializers.CharField(help_text="The scope's consolidated blob; empty before the first consolidation.")
    blob_version = serializers.IntegerField(allow_null=True)
    recent_reflections = inline_serializer(
        name="RecentReflection",
        fields={"id": serializers.IntegerField(), "content": serializers.CharField()},
        many=True,
    )


class MemoryContextView(APIView):
    @extend_schema_serializer(component_name="MemoryContextQuery")
    class InputSerializer(serializers.Serializer):
        user = serializers.CharField(required=False, max_length=200, help_text="End user's external id.")
        session = serializers.CharField(required=False, max_length=200, help_text="Session's external id.")

    @extend_schema_serializer(component_name="MemoryContext")
    class OutputSerializer(serializers.Serializer):
        text = serializers.CharField(help_text="The block to put in the prompt; empty when there is no memory yet.")
        parts = inline_serializer(
            name="MemoryContextParts",
            fields={
                "agent": ScopePartSerializer(),
                "user": ScopePartSerializer(allow_null=True),
                "session": ScopePartSerializer(allow_null=True),
            },
        )
        token_count = serializers.IntegerField()
        etag = serializers.CharField()

    @extend_schema(
        operation_id="memory_context",
        summary="The always-in-context block for an agent, a user and a session",
        description=(
            "Consolidated blobs plus the recent unabsorbed reflections of the agent, the user and the session, as "
            "an XML-like block and as JSON parts. Served from a cache that any change to those memories "
            "invalidates. Send the returned ETag in `If-None-Match` to get 304 when nothing changed. "
            "403 `memory_context_disabled` when the agent's always-in-context memory is switched off."
        ),
        parameters=[
            OpenApiParameter("user", str, description="End user's external id; unknown users have no memory yet."),
            OpenApiParameter("session", str, description="Session's external id; implies its user."),
            OpenApiParameter("If-None-Match", str, OpenApiParameter.HEADER, description="An ETag from a prior call."),
        ],
        responses={
            200: OutputSerializer,
            304: OpenApiResponse(description="Not modified since the ETag given in If-None-Match."),
            400: ERROR_RESPONSE,
            403: ERROR_RESPONSE,
        },
        examples=[examples.MEMORY_CONTEXT_BLOCK_FOR_A_USER_S_SESSION],
        tags=["memory"],
    )
    def get(self, request: Request) -> Response:
        agent = request_agent(request)
        params = self.InputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        target = memory_scope_resolve(
            agent=agent,
            user_external_id=params.validated_data.get("user"),
            session_external_id=params.validated_data.get("session"),
        )
        context = memory_context_get(agent=agent, user=target.user, session=target.session)
        if not context.enabled:
            raise MemoryContextDisabled()
        headers = {"ETag": context.etag, "Cache-Control": "private, no-cache"}
        if _etag_matches(etag=context.etag, if_none_match=request.headers.get("If-None-Match", "")):
            return Response(status=status.HTTP_304_NOT_MODIFIED, headers=headers)
        body = {"text": context.text, "parts": context.parts, "token_count": context.token_count, "etag": context.etag}
        return Response(self.OutputSerializer(body).data, headers=headers)


def _etags_of(if_none_match: str) -> set[str]:
    """The entity tags of an If-None-Match header, weak ones compared as strong (RFC 9110 weak comparison)."""
    return {tag.strip().removeprefix("W/") for tag in if_none_match.split(",") if tag.strip()}


def _etag_matches(*, etag: str, if_none_match: str) -> bool:
    tags = _etags_of(if_none_match)
    return etag in tags or "*" in tags


class BundlePartSerializer(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=["included", "partial", "over_budget", "empty", "disabled", "in_context"],
        help_text=(
            "included; partial (some items left out or shortened); over_budget (nothing fitted); empty (no such "
            "memory); disabled (switched off for the agent); in_context (already inside the context part)."
        ),
    )
    tokens = serializers.IntegerField(help_text="Tokens this part uses in `text`.")
    token_limit = serializers.IntegerField()
    text = serializers.CharField()
    items = serializers.ListField(child=serializers.DictField())
    omitted = serializers.IntegerField(help_text="Items found but left out for the budget.")


class MemoryBundleView(APIView):
    @extend_schema_serializer(component_name="MemoryBundleRequest")
    class InputSerializer(serializers.Serializer):
        query = StrictCharField(max_length=20000, help_text="The prompt memory is gathered for.")
        user = StrictCharField(required=False, max_length=200)
        session = StrictCharField(required=False, max_length=200)
        token_budget = StrictIntegerField(min_value=1, max_value=200_000, default=2000)
        facts_top_k = StrictIntegerField(min_value=0, max_value=TOP_K_MAX, default=10)
        min_similarity = StrictFloatField(
            min_value=-1.0, max_value=1.0, required=False, help_text="Facts: drop vector matches below it."
        )
        recency_weight = StrictFloatField(min_value=0.0, max_value=1.0, default=0.0)
        recent_turns = StrictIntegerField(min_value=0, max_value=200, default=10)
        similar_messages_top_k = StrictIntegerField(min_value=0, max_value=50, default=5)
        similar_messages_min_similarity = StrictFloatField(min_value=-1.0, max_value=1.0, default=0.3)
        part_token_limits = serializers.DictField(
            child=StrictIntegerField(min_value=0),
            required=False,
            help_text=f"Per-part caps, by part name ({', '.join(BUNDLE_PART_NAMES)}); defaults "
            f"{DEFAULT_PART_TOKEN_LIMITS}.",
        )

        def validate_part_token_limits(self, value: dict[str, int]) -> dict[str, int]:
            unknown = sorted(set(value) - set(BUNDLE_PART_NAMES))
            if unknown:
                raise serializers.ValidationError(
                    f"unknown part {', '.join(unknown)}: use {', '.join(BUNDLE_PART_NAMES)}."
                )
            return value

    @extend_schema_serializer(component_name="MemoryBundle")
    class OutputSerializer(serializers.Serializer):
        query = serializers.CharField()
        token_budget = serializers.IntegerField()
        tokens_used = serializers.IntegerField(help_text="Sum of the parts' tokens; never above token_budget.")
        text = serializers.CharField(help_text="The included parts, rendered for a prompt.")
        parts = inline_serializer(
            name="MemoryBundleParts", fields={name: BundlePartSerializer() for name in BUNDLE_PART_NAMES}
        )

    @extend_schema(
        operation_id="memory_bundle",
        summary="Everything memory has for one prompt, cut to a token budget",
        description=(
            "The always-in-context block, the session's summary when the block is not included, the session's "
            "last turns, the top facts for the query (hybrid search) and similar past messages (across the user's "
            "sessions while the session has fewer than MESSAGE_SEARCH_WIDEN_BELOW_MESSAGES messages). Parts get "
            "the budget in that order, each capped by its own limit; each part reports the tokens it used."
        ),
        request=InputSerializer,
        responses={200: OutputSerializer, 400: ERROR_RESPONSE},
        examples=[
            examples.MEMORY_BUNDLE_BUNDLE_FOR_A_PROMPT,
            examples.MEMORY_BUNDLE_BUNDLE,
        ],
        tags=["memory"],
    )
    def post(self, request: Request) -> Response:
        agent = request_agent(request)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        target = memory_scope_resolve(
            agent=agent, user_external_id=data.get("user"), session_external_id=data.get("session")
        )
        bundle = memory_bundle_build(
            agent=agent,
            user=target.user,
            session=target.session,
            query=data["query"],
            token_budget=data["token_budget"],
            limits=BundleLimits(
                facts_top_k=data["facts_top_k"],
                similar_messages_top_k=data["similar_messages_top_k"],
                similar_messages_min_similarity=data["similar_messages_min_similarity"],
                recent_turns=data["recent_turns"],
                part_token_limits=data.get("part_token_limits", {}),
            ),
            min_similarity=data.get("min_similarity"),
            recency_weight=data["recency_weight"],
        )
        body = {
            "query": bundle.query,
            "token_budget": bundle.token_budget,
            "tokens_used": bundle.tokens_used,
            "text": bundle.text,
            "parts": {name: asdict(part) for name, part in bundle.parts.items()},
        }
        return Response(self.OutputSerializer(body).data)
