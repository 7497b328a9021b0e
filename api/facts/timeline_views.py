"""GET /api/v1/users/{user_id}/timeline and GET /api/v1/entities/{entity_id}/timeline: what changed, in world-time
order (facts.selectors.timeline)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import APIView

from agents.authentication import request_agent
from api.conversations.serializers import EXTERNAL_ID_MAX_LENGTH
from api.facts.timeline_serializers import TimelineFilterSerializer, TimelinePageOutputSerializer
from conversations.selectors.memory_scope import memory_scope_resolve
from core.exceptions import NotFoundError
from facts.selectors.graph import entity_get
from facts.selectors.timeline import TimelineScope, timeline_read, timeline_scope_of_entity, timeline_scope_of_user

_DESCRIPTION = (
    "Entries in world-time order: a statement by its start, an ending by its end, one whose time in the world is not "
    "known by the day memory recorded it. Each is a fact version and what it says happened (started, ended, "
    "corrected), with its world time, when memory recorded it and the messages that said it. `time_from`/`time_to` "
    "keep the entries placed in those days. Follow `next` until it is null."
)
USER_ID_PARAMETER = OpenApiParameter(
    "user_id",
    {"type": "string", "maxLength": EXTERNAL_ID_MAX_LENGTH, "minLength": 1},
    OpenApiParameter.PATH,
    description="The end user's id in your system.",
)


def _page(request: Request, scope: TimelineScope) -> Response:
    filters = TimelineFilterSerializer(data=request.query_params)
    filters.is_valid(raise_exception=True)
    options = filters.validated_data
    page = timeline_read(
        scope=scope,
        time_from=options.get("time_from"),
        time_to=options.get("time_to"),
        after=options.get("cursor"),
        limit=options["page_size"],
    )
    next_url = None
    if page.next_after is not None:
        next_url = replace_query_param(request.build_absolute_uri(), "cursor", page.next_after.token())
    return Response(TimelinePageOutputSerializer({"next": next_url, "results": page.entries}).data)


class UserTimelineView(APIView):
    @extend_schema(
        parameters=[USER_ID_PARAMETER, TimelineFilterSerializer],
        responses=TimelinePageOutputSerializer,
        summary="What changed about an end user, in the order it happened in the world",
        description=f"{_DESCRIPTION} A user the agent has never seen is a 404.",
    )
    def get(self, request: Request, user_id: str) -> Response:
        agent = request_agent(request)
        user = None
        if len(user_id) <= EXTERNAL_ID_MAX_LENGTH and "\x00" not in user_id:
            user = memory_scope_resolve(agent=agent, user_external_id=user_id, session_external_id=None).user
        if user is None:
            raise NotFoundError(f"No user {user_id[:EXTERNAL_ID_MAX_LENGTH]!r}.", fields={"user": ["not found"]})
        return _page(request, timeline_scope_of_user(agent=agent, user=user))


class EntityTimelineView(APIView):
    @extend_schema(
        parameters=[TimelineFilterSerializer],
        responses=TimelinePageOutputSerializer,
        summary="What changed about an entity, in the order it happened in the world",
        description=f"{_DESCRIPTION} The entries are the versions of the facts that stated the entity's relations.",
    )
    def get(self, request: Request, entity_id: int) -> Response:
        entity = entity_get(agent=request_agent(request), entity_id=entity_id)
        return _page(request, timeline_scope_of_entity(entity=entity))
