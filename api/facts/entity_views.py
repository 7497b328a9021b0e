from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.authentication import request_agent
from api.facts.entity_serializers import (
    EntityDetailOutputSerializer,
    EntityListFilterSerializer,
    EntityOutputSerializer,
)
from api.facts.list_filters import UnknownListUser, list_filter_user
from core.api.pagination import StrictCursorPagination
from facts.models import Entity
from facts.selectors.graph import entities_list, entity_facts, entity_get, entity_relations


class EntityListView(ListAPIView):
    """GET: one user's entities (or the agent-wide ones), newest first, cursor-paginated, searched by name."""

    serializer_class = EntityOutputSerializer
    pagination_class = StrictCursorPagination

    def get_queryset(self) -> QuerySet[Entity]:
        filters = EntityListFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        agent = request_agent(self.request)
        try:
            user = list_filter_user(agent=agent, filters=filters.validated_data)
        except UnknownListUser:
            return Entity.objects.none()
        return entities_list(agent=agent, user=user, query=filters.validated_data.get("q", ""))

    @extend_schema(
        parameters=[EntityListFilterSerializer],
        summary="List entities (people, places, organisations, things, events) memory knows, by name",
        description="Cursor-paginated, newest first: follow `next` until it is null. Merged entities are left out. "
        "A user id the agent has never used has none: an empty page, never 404.",
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class EntityDetailView(APIView):
    @extend_schema(
        responses=EntityDetailOutputSerializer,
        summary="One entity with its relations (current and ended) and the facts that stated them",
    )
    def get(self, request: Request, entity_id: int) -> Response:
        entity = entity_get(agent=request_agent(request), entity_id=entity_id)
        relations = entity_relations(entity=entity).prefetch_related("source_messages")
        return Response(
            EntityDetailOutputSerializer(
                {"entity": entity, "relations": relations, "facts": entity_facts(entity=entity)}
            ).data
        )
