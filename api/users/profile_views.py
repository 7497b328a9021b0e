"""GET /api/v1/users/{user_id}/profile and GET /api/v1/profile: what memory holds of a user, or agent-wide, by category
(facts.selectors.profile)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.authentication import request_agent
from agents.models import Agent, EndUser
from api.conversations.serializers import EXTERNAL_ID_MAX_LENGTH
from api.users import examples
from api.users.profile_serializers import ProfileFilterSerializer, ProfileOutputSerializer
from conversations.selectors.end_users import end_user_with_activity
from core.exceptions import NotFoundError
from facts.selectors.profile import profile_sections, user_profile

_DESCRIPTION = (
    "Per category (the agent's: identity, relationships, work, places, activities, likes, dislikes, health, "
    "possessions, plans, events, beliefs, other), one entry per value, each with its source facts, when it held in "
    "the world (`world_time`, `holds_now`) and when it was last mentioned. An entry none of whose facts holds today "
    "is history: shown under `history` with `include_history=true`. Facts formed before categories existed are not "
    "filed and not shown. `category` (repeatable) keeps those categories; one the agent does not file under is a 400 "
    "naming the field."
)


def profile_answer(*, agent: Agent, user: EndUser | None, request: Request) -> dict[str, Any]:
    filters = ProfileFilterSerializer(data=request.query_params)
    filters.is_valid(raise_exception=True)
    include_history = filters.validated_data["include_history"]
    profile = profile_sections(
        agent=agent, user=user, categories=filters.validated_data.get("category"), include_history=include_history
    )
    categories = []
    for section in profile.sections:
        shown: dict[str, Any] = {"category": section.category, "name": section.name, "entries": section.entries}
        if include_history:
            shown["history"] = section.history
        categories.append(shown)
    return ProfileOutputSerializer(
        {
            "user": user.external_id if user is not None else None,
            "categories": categories,
            "attributes": list(user_profile(agent=agent, user=user).values()) if user is not None else [],
            "truncated": profile.truncated,
        }
    ).data


class UserProfileView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "user_id",
                {"type": "string", "maxLength": EXTERNAL_ID_MAX_LENGTH, "minLength": 1},
                OpenApiParameter.PATH,
                description="The end user's id in your system.",
            ),
            ProfileFilterSerializer,
        ],
        responses=ProfileOutputSerializer,
        summary="What memory holds of an end user, by category",
        description=f"{_DESCRIPTION} A user the agent has never seen is a 404. The keyed attributes (home_city, ...) "
        "come under `attributes`.",
        examples=[examples.USER_PROFILE],
    )
    def get(self, request: Request, user_id: str) -> Response:
        agent = request_agent(request)
        user = None
        if len(user_id) <= EXTERNAL_ID_MAX_LENGTH and "\x00" not in user_id:
            user = end_user_with_activity(agent=agent, external_id=user_id)
        if user is None:
            raise NotFoundError(f"No user {user_id[:EXTERNAL_ID_MAX_LENGTH]!r}.", fields={"user": ["not found"]})
        return Response(profile_answer(agent=agent, user=user, request=request))


class AgentProfileView(APIView):
    @extend_schema(
        parameters=[ProfileFilterSerializer],
        responses=ProfileOutputSerializer,
        summary="What memory holds agent-wide (shared by every user), by category",
        description=f"{_DESCRIPTION} Only the facts visible to every user of the agent.",
        examples=[examples.USER_PROFILE],
    )
    def get(self, request: Request) -> Response:
        return Response(profile_answer(agent=request_agent(request), user=None, request=request))
