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
from agents.models import Agent, EndUser
from api.facts import examples
from api.facts.list_filters import UnknownListUser, list_filter_user
from api.facts.serializers import (
    FactCreateInputSerializer,
    FactDeleteFilterSerializer,
    FactFeedbackInputSerializer,
    FactFeedbackOutputSerializer,
    FactHistoryOutputSerializer,
    FactHitOutputSerializer,
    FactListFilterSerializer,
    FactOutputSerializer,
    FactUpdateInputSerializer,
    MemorySearchInputSerializer,
    MemorySearchOutputSerializer,
)
from conversations.selectors.memory_scope import memory_scope_resolve
from conversations.services.ingestion import end_user_get_or_create
from core.api.hot_path import input_validate, output_represent
from core.api.pagination import StrictCursorPagination
from core.exceptions import NotFoundError
from core.runtime.timing import stage_timed
from core.safety.sensitive_screening import written_statement_screen
from facts.models import Fact, FactScope, FactWriter
from facts.selectors.facts import fact_get, facts_list
from facts.selectors.search import FactSearchDisabled, facts_search
from facts.selectors.versions import fact_versions
from facts.services.curation import fact_delete, fact_expiry_resolve, fact_get_or_create, fact_revise
from facts.services.facts import facts_erase
from facts.services.feedback import fact_feedback_give
from facts.world_time import UNKNOWN_WORLD_TIME


def _user_for_write(agent: Agent, external_id: str | None) -> EndUser | None:
    return end_user_get_or_create(agent=agent, external_id=external_id) if external_id else None


class FactListView(ListAPIView):
    """GET: the agent's facts, newest first, cursor-paginated. POST: store a fact by hand."""

    serializer_class = FactOutputSerializer
    pagination_class = StrictCursorPagination

    def get_queryset(self) -> QuerySet[Fact]:
        filters = FactListFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        agent = request_agent(self.request)
        try:
            user = list_filter_user(agent=agent, filters=filters.validated_data)
        except UnknownListUser:
            return Fact.objects.none()
        return facts_list(
            agent=agent,
            user=user,
            scope=filters.validated_data.get("scope"),
            tag=filters.validated_data.get("tag"),
            include_closed=filters.validated_data["status"] == "all",
        )

    @extend_schema(
        parameters=[FactListFilterSerializer],
        summary="List facts (current versions unless status=all)",
        description="Cursor-paginated, newest first: follow `next` until it is null. `page_size` up to 500; "
        "a larger one is refused, never silently reduced.",
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        request=FactCreateInputSerializer,
        responses={201: FactOutputSerializer, 200: FactOutputSerializer},
        summary="Store a fact (embedded now); an existing identical fact is returned instead",
        description="Deduplicated by normalised content within the owner (the user for a user-scoped fact, the "
        "agent otherwise): when a current fact already says the same, it is returned with 200 (given an expiry, it "
        "takes it). `expires_at` or `expires_in` make it expire: it then leaves search, the context block and the "
        "bundle, and retention closes it. A content that holds a secret (a password, PIN or code, a key, a card or "
        "account number, a government id, a security answer, a login) is refused with a 400 `sensitive_data` naming "
        "`content` and the kind of secret, never the value, under the agent's `withhold` policy; under `redact` it "
        "is stored with the value replaced.",
        examples=[examples.FACT_LIST_A_USER_FACT, examples.FACT_LIST_FOR_A_WEEK],
    )
    def post(self, request: Request) -> Response:
        data = FactCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        agent = request_agent(request)
        user_external_id = data.validated_data.get("user")
        default_scopes = [FactScope.USER] if user_external_id else [FactScope.AGENT]
        scopes = data.validated_data.get("scopes", default_scopes)
        expires_at = fact_expiry_resolve(
            expires_at=data.validated_data.get("expires_at"), expires_in=data.validated_data.get("expires_in")
        )
        with transaction.atomic():  # a refused fact leaves no new end user, and no finding, behind either
            content = written_statement_screen(agent=agent, text=data.validated_data["content"], field="content")
            fact, created = fact_get_or_create(
                agent=agent,
                user=_user_for_write(agent, user_external_id) if FactScope.USER in scopes else None,
                scopes=scopes,
                content=content,
                tags=data.validated_data.get("tags", ()),
                metadata=data.validated_data.get("metadata"),
                key=data.validated_data.get("key", ""),
                written_by=FactWriter.API,
                world_time=data.validated_data.get("world_time", UNKNOWN_WORLD_TIME),
                expires_at=expires_at,
            )
        return Response(
            FactOutputSerializer(fact).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )


class FactDetailView(APIView):
    @extend_schema(responses=FactOutputSerializer, summary="One fact version")
    def get(self, request: Request, fact_id: int) -> Response:
        return Response(FactOutputSerializer(fact_get(agent=request_agent(request), fact_id=fact_id)).data)

    @extend_schema(
        request=FactUpdateInputSerializer,
        responses=FactOutputSerializer,
        summary="Change a fact: writes a new version (new id, re-embedded); the old one stays as history",
        description="Only the current version can be changed (409 names the current one otherwise). What is "
        "not given carries over. An expiry alone (`expires_at`, null for never, or `expires_in`) changes in place: "
        "no new version. A new content that holds a secret is refused or redacted as when a fact is posted.",
        examples=[examples.FACT_DETAIL_NEW_CONTENT],
    )
    def patch(self, request: Request, fact_id: int) -> Response:
        data = FactUpdateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        agent = request_agent(request)
        fact = fact_get(agent=agent, fact_id=fact_id)
        given = data.validated_data
        expires_at = fact_expiry_resolve(expires_at=given.get("expires_at"), expires_in=given.get("expires_in"))
        with transaction.atomic():  # a refused change leaves no new end user, and no finding, behind either
            content = given.get("content")
            if content is not None:
                content = written_statement_screen(agent=agent, text=content, field="content")
            successor = fact_revise(
                fact=fact,
                content=content,
                scopes=data.validated_data.get("scopes"),
                user=_user_for_write(agent, data.validated_data.get("user")),
                tags=data.validated_data.get("tags"),
                metadata=data.validated_data.get("metadata"),
                reason=data.validated_data["reason"],
                written_by=FactWriter.API,
                world_time=data.validated_data.get("world_time"),
                expires_at=expires_at,
                expiry_changed=bool({"expires_at", "expires_in"} & set(given)),
            )
        return Response(FactOutputSerializer(successor).data)

    @extend_schema(
        parameters=[FactDeleteFilterSerializer],
        responses={204: None},
        summary="Delete a fact: close it (kept as history), or with hard=true erase its whole lineage",
    )
    def delete(self, request: Request, fact_id: int) -> Response:
        options = FactDeleteFilterSerializer(data=request.query_params)
        options.is_valid(raise_exception=True)
        fact = fact_get(agent=request_agent(request), fact_id=fact_id)
        if options.validated_data["hard"]:
            facts_erase(fact_ids=[fact.pk])
        else:
            fact_delete(fact=fact, reason=options.validated_data["reason"])
        return Response(status=status.HTTP_204_NO_CONTENT)


class FactHistoryView(APIView):
    @extend_schema(
        responses=FactHistoryOutputSerializer,
        summary="Every version of a fact, oldest first, with why each was written and closed",
    )
    def get(self, request: Request, fact_id: int) -> Response:
        fact = fact_get(agent=request_agent(request), fact_id=fact_id)
        versions = sorted(fact_versions(fact=fact), key=lambda version: version.version)
        return Response(FactHistoryOutputSerializer({"lineage": fact.lineage, "versions": versions}).data)


class FactFeedbackView(APIView):
    @extend_schema(
        request=FactFeedbackInputSerializer,
        responses={201: FactFeedbackOutputSerializer},
        summary="Say how a fact served: useful, wrong, outdated or harmful, from the agent or for an end user",
        description="Recorded and counted in the console. A user's `wrong` or `outdated` on their own user-scoped fact "
        "closes it (kept as history, the rating and note its reason). On agent-wide memory (every user sees it), on "
        "memory an operator curated, and for `harmful`, it waits for an operator's review (a `review.pending` "
        "webhook event): outcome `pending_review`. With `user`, the fact must be one that user sees (404 otherwise).",
        examples=[examples.FACT_FEEDBACK_OUTDATED],
    )
    def post(self, request: Request, fact_id: int) -> Response:
        data = FactFeedbackInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        agent = request_agent(request)
        fact = fact_get(agent=agent, fact_id=fact_id)
        with transaction.atomic():  # a refused feedback leaves no new end user behind either
            user = _user_for_write(agent, data.validated_data.get("user"))
            if user is not None and fact.restricted_to_user_id not in (None, user.pk):
                raise NotFoundError(f"No fact {fact_id}.", fields={"id": ["not found"]})  # not one this user sees
            # A note closes the user's fact with it as the reason (memory's history): screened as a fact's content.
            note = written_statement_screen(agent=agent, text=data.validated_data["note"], field="note")
            feedback = fact_feedback_give(
                fact=fact, rating=data.validated_data["rating"], note=note, user=user, via="api"
            )
        return Response(FactFeedbackOutputSerializer(feedback).data, status=status.HTTP_201_CREATED)


class MemorySearchView(APIView):
    @extend_schema(
        request=MemorySearchInputSerializer,
        responses=MemorySearchOutputSerializer,
        summary="Hybrid fact search (vector + full-text, reciprocal rank fusion)",
        description="Searches the agent's facts visible agent-wide plus the user's own. A user id the agent has "
        "never used has no facts of its own, so only agent-wide facts can match: 200, never 404. Full text matches "
        'any query word, ranked by BM25. A query that asks when ("When did ...") or names a period ("in May '
        '2023") adds a time signal; `time_from`/`time_to` give the period explicitly, and `time_filter` `restrict` '
        'searches only it. A question asking for a list within a category ("What activities does Melanie do?", '
        '"Which books has she read?") gets that category\'s entries about the person it names first, then the usual '
        "hits (hybrid mode). Each hit gives its rank in every signal and why it was returned (`reasons`). 403 when "
        "the agent's RAG is off.",
        examples=[
            examples.MEMORY_SEARCH_WHAT_THE_AGENT_KNOWS_ABOUT_A_USER_S_BIRTHDAY,
            examples.MEMORY_SEARCH_AS_IT_WAS_KNOWN_ON_A_DATE_DIVERSE_RESULTS,
        ],
    )
    def post(self, request: Request) -> Response:
        options = input_validate(serializer_class=MemorySearchInputSerializer, data=request.data)
        agent = request_agent(request)
        if not agent.rag_enabled:
            raise FactSearchDisabled()
        target = memory_scope_resolve(agent=agent, user_external_id=options.pop("user", None), session_external_id=None)
        hits = facts_search(agent=agent, user=target.user, **options)
        with stage_timed("serialize"):
            return Response({"results": output_represent(serializer_class=FactHitOutputSerializer, instances=hits)})
