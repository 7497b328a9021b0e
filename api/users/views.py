"""The users API: an application runs its users' memory from its own code: list them, read what is kept about one,
export it (the native export, importable by import_memories) and erase it (portability's user_erase)."""

from __future__ import annotations

import json
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.generics import ListAPIView
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.authentication import request_agent, request_requester
from agents.models import EndUser
from api.users import examples
from api.users.serializers import (
    UserDetailOutputSerializer,
    UserEraseOutputSerializer,
    UserListFilterSerializer,
    UserOutputSerializer,
)
from conversations.selectors.end_users import end_user_with_activity, end_users_with_activity
from core.api.pagination import StrictCursorPagination
from core.exceptions import NotFoundError
from portability.selectors.native_export import memories_export
from portability.selectors.user_memory import user_memory_counts
from portability.services.erasure import user_erase, user_erasure_find

USER_ID_MAX_LENGTH = 200
USER_ID_PARAMETER = OpenApiParameter(
    "user_id",
    {"type": "string", "maxLength": USER_ID_MAX_LENGTH, "minLength": 1},
    OpenApiParameter.PATH,
    description="The end user's id in your system.",
)


def _user_of(request: Request, user_id: str) -> EndUser:
    user = None
    if len(user_id) <= USER_ID_MAX_LENGTH and "\x00" not in user_id:
        user = end_user_with_activity(agent=request_agent(request), external_id=user_id)
    if user is None:
        raise NotFoundError(f"No user {user_id!r}.", fields={"user": ["not found"]})
    return user


class UserListView(ListAPIView):
    serializer_class = UserOutputSerializer
    pagination_class = StrictCursorPagination

    def get_queryset(self) -> QuerySet[EndUser]:
        filters = UserListFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        return end_users_with_activity(agent=request_agent(self.request), **filters.validated_data)

    @extend_schema(
        parameters=[UserListFilterSerializer],
        summary="List the agent's end users, newest first, with their last activity",
        examples=[examples.USER_LIST],
        description="Cursor-paginated: follow `next` until it is null. `active_after` and `active_before` filter by "
        "the last activity (e.g. users inactive for a year: `active_before` a year ago).",
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class UserDetailView(APIView):
    @extend_schema(
        parameters=[USER_ID_PARAMETER],
        responses=UserDetailOutputSerializer,
        summary="One end user: what is kept about them, counted by kind, and their last activity",
        examples=[examples.USER_DETAIL],
    )
    def get(self, request: Request, user_id: str) -> Response:
        user = _user_of(request, user_id)
        user.memory = user_memory_counts(user=user)  # type: ignore[attr-defined]  # read by the serializer
        return Response(UserDetailOutputSerializer(user).data)

    @extend_schema(
        parameters=[USER_ID_PARAMETER],
        request=None,
        responses={200: UserEraseOutputSerializer, 404: OpenApiResponse(description="No such user, ever.")},
        summary="Erase an end user: every row kept about them, an erasure record kept without their id",
        description="Deletes their sessions and messages, facts with every version, embeddings, entities and "
        "relations, reflections, blobs with past versions, held memory, feedback, jobs, webhook events and cached "
        'context (docs/security.md, "Erasure"). Agent-wide memory formed from their conversations stays. '
        "Idempotent: a user erased before answers 200 with `already_erased` and the record of that erasure. A "
        "`user.erased` webhook event follows.",
        examples=[examples.USER_ERASED],
    )
    def delete(self, request: Request, user_id: str) -> Response:
        agent = request_agent(request)
        user = EndUser.objects.filter(agent=agent, external_id=user_id[:USER_ID_MAX_LENGTH]).first()
        if user is None or len(user_id) > USER_ID_MAX_LENGTH:
            record = user_erasure_find(agent=agent, user_external_id=user_id)
            if record is None:
                raise NotFoundError(f"No user {user_id!r}.", fields={"user": ["not found"]})
            already = True
        else:
            with transaction.atomic():
                record = user_erase(user=user, requested_by=request_requester(request))
            already = False
        return Response(UserEraseOutputSerializer({"user": user_id, "already_erased": already, "erasure": record}).data)


class JSONLinesRenderer(BaseRenderer):
    """What the export streams: one JSON object a line (the view writes the lines itself)."""

    media_type = "application/x-ndjson"
    format = "jsonl"

    def render(self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None) -> bytes:
        return json.dumps(data).encode()  # only an error body comes through here


class UserExportView(APIView):
    renderer_classes = [JSONRenderer, JSONLinesRenderer]

    @extend_schema(
        parameters=[USER_ID_PARAMETER],
        responses={(200, "application/x-ndjson"): OpenApiTypes.STR},
        summary="Export an end user's memory: the native export, streamed as JSON lines",
        description="The same lines as `manage.py export_memories --agent <agent> --user <user>` (sessions, messages, "
        "facts with every version, entities and relations, reflections, blobs with past versions), which "
        "`manage.py import_memories --format native` reads back, into this agent or another.",
        examples=[examples.USER_EXPORT],
    )
    def get(self, request: Request, user_id: str) -> StreamingHttpResponse:
        user = _user_of(request, user_id)
        agent = request_agent(request)
        lines = (json.dumps(row, ensure_ascii=False) + "\n" for row in memories_export(agent=agent, user=user))
        response = StreamingHttpResponse(lines, content_type="application/x-ndjson")
        response["Content-Disposition"] = f'attachment; filename="memory-{agent.external_id}-user-{user.pk}.jsonl"'
        return response
