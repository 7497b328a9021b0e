from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.authentication import request_agent
from agents.models import Agent
from api.reflections import examples
from api.reflections.curation_serializers import (
    ConsolidatedMemoryDetailOutputSerializer,
    ConsolidatedMemoryEditInputSerializer,
    ConsolidatedMemoryOutputSerializer,
    ReflectionCreateInputSerializer,
    ReflectionListFilterSerializer,
    ReflectionOutputSerializer,
    ScopeFilterSerializer,
)
from conversations.selectors.memory_scope import MemoryScopeTarget, memory_scope_resolve
from conversations.services.ingestion import end_user_get_or_create
from core.api.pagination import StrictCursorPagination
from core.exceptions import ApplicationError
from reflections.models import ConsolidatedMemory, MemoryScope, Reflection
from reflections.selectors.lists import (
    consolidated_memories_list,
    consolidated_memory_get,
    reflection_get,
    reflections_list,
)
from reflections.services.manual import consolidated_memory_edit, reflection_create_manual, reflection_delete


def _filter_target(agent: Agent, filters: dict) -> MemoryScopeTarget | None:
    """The user and session the filters name; None when they name one the agent has never used (nothing to list)."""
    target = memory_scope_resolve(
        agent=agent, user_external_id=filters.get("user"), session_external_id=filters.get("session")
    )
    if ("user" in filters and target.user is None) or ("session" in filters and target.session is None):
        return None
    return target


class ReflectionListView(ListAPIView):
    """GET: the agent's reflections, newest first, cursor-paginated. POST: add one by hand."""

    serializer_class = ReflectionOutputSerializer
    pagination_class = StrictCursorPagination

    def get_queryset(self) -> QuerySet[Reflection]:
        filters = ReflectionListFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        agent = request_agent(self.request)
        target = _filter_target(agent, filters.validated_data)
        if target is None:
            return Reflection.objects.none()
        return reflections_list(
            agent=agent,
            scope=filters.validated_data.get("scope"),
            user=target.user,
            session=target.session,
            absorbed=filters.validated_data["absorbed"],
        )

    @extend_schema(parameters=[ReflectionListFilterSerializer], summary="List reflections")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        request=ReflectionCreateInputSerializer,
        responses={201: ReflectionOutputSerializer},
        summary="Add a reflection by hand (source manual)",
        description="It joins the scope's buffer: in the always-in-context block at once, consolidated later.",
        examples=[examples.REFLECTION_LIST_A_USER_PREFERENCE],
    )
    def post(self, request: Request) -> Response:
        data = ReflectionCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        agent = request_agent(request)
        scope, user_id, session_id = (data.validated_data.get(name) for name in ("scope", "user", "session"))
        target = memory_scope_resolve(agent=agent, user_external_id=user_id, session_external_id=session_id)
        if scope == MemoryScope.SESSION and target.session is None:
            raise ApplicationError(f"no session {session_id!r}.", fields={"session": ["not found"]})
        with transaction.atomic():  # a refused reflection leaves no new end user behind either
            user = target.user
            if user is None and user_id and scope == MemoryScope.USER:
                user = end_user_get_or_create(agent=agent, external_id=user_id)
            reflection = reflection_create_manual(
                agent=agent, scope=scope, content=data.validated_data["content"], user=user, session=target.session
            )
        return Response(ReflectionOutputSerializer(reflection).data, status=status.HTTP_201_CREATED)


class ReflectionDetailView(APIView):
    @extend_schema(responses=ReflectionOutputSerializer, summary="One reflection")
    def get(self, request: Request, reflection_id: int) -> Response:
        return Response(
            ReflectionOutputSerializer(reflection_get(agent=request_agent(request), reflection_id=reflection_id)).data
        )

    @extend_schema(
        responses={204: None},
        summary="Delete a reflection",
        description="It leaves the buffer and the context block at once. An absorbed reflection's text stays in the "
        "blob that absorbed it: edit the blob to change that.",
    )
    def delete(self, request: Request, reflection_id: int) -> Response:
        reflection_delete(reflection=reflection_get(agent=request_agent(request), reflection_id=reflection_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class ConsolidatedMemoryListView(ListAPIView):
    serializer_class = ConsolidatedMemoryOutputSerializer
    pagination_class = StrictCursorPagination

    def get_queryset(self) -> QuerySet[ConsolidatedMemory]:
        filters = ScopeFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        agent = request_agent(self.request)
        target = _filter_target(agent, filters.validated_data)
        if target is None:
            return ConsolidatedMemory.objects.none()
        return consolidated_memories_list(
            agent=agent, scope=filters.validated_data.get("scope"), user=target.user, session=target.session
        )

    @extend_schema(parameters=[ScopeFilterSerializer], summary="List consolidated blobs")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class ConsolidatedMemoryDetailView(APIView):
    @extend_schema(responses=ConsolidatedMemoryDetailOutputSerializer, summary="A blob and its past versions")
    def get(self, request: Request, memory_id: int) -> Response:
        memory = consolidated_memory_get(agent=request_agent(request), memory_id=memory_id)
        return Response(ConsolidatedMemoryDetailOutputSerializer(memory).data)

    @extend_schema(
        request=ConsolidatedMemoryEditInputSerializer,
        responses=ConsolidatedMemoryDetailOutputSerializer,
        summary="Edit a blob's text: a new version; the old text is kept as a past version",
        examples=[examples.CONSOLIDATED_MEMORY_DETAIL_FIX_A_BLOB],
    )
    def patch(self, request: Request, memory_id: int) -> Response:
        data = ConsolidatedMemoryEditInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        memory = consolidated_memory_get(agent=request_agent(request), memory_id=memory_id)
        memory = consolidated_memory_edit(
            memory=memory,
            content=data.validated_data["content"],
            reason=data.validated_data["reason"],
            expected_version=data.validated_data.get("expected_version"),
        )
        return Response(ConsolidatedMemoryDetailOutputSerializer(memory).data)
