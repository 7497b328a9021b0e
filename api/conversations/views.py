from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.authentication import request_agent
from api.conversations import examples
from api.conversations.serializers import (
    EXTERNAL_ID_MAX_LENGTH,
    FormationQueuedOutputSerializer,
    MessageOutputSerializer,
    MessagesAppendInputSerializer,
    MessagesAppendOutputSerializer,
    SessionCreateInputSerializer,
    SessionDeletedOutputSerializer,
    SessionOutputSerializer,
    messages_append_input_validated,
)
from conversations.models import Message, Session
from conversations.services.ingestion import MessageInput, session_get_or_create
from core.api.pagination import StrictCursorPagination
from core.exceptions import ApplicationError, NotFoundError
from formation.services.formation_triggers import formation_request
from formation.services.ingestion import session_close_and_form, session_messages_ingest
from portability.services.erasure import session_erase


def _session_id_checked(session_id: str) -> str:
    """The path's session id as the body's is checked: what the column cannot hold is a client error, not a failed
    insert (a 500) or a lookup that can never match."""
    if "\x00" in session_id:
        raise ApplicationError("Null characters are not allowed in a session id.", fields={"session": ["invalid"]})
    if len(session_id) > EXTERNAL_ID_MAX_LENGTH:
        raise ApplicationError(
            f"A session id is at most {EXTERNAL_ID_MAX_LENGTH} characters; this one has {len(session_id)}.",
            fields={"session": [f"Ensure this field has no more than {EXTERNAL_ID_MAX_LENGTH} characters."]},
        )
    return session_id


SESSION_ID_PARAMETER = OpenApiParameter(
    "session_id",
    {"type": "string", "maxLength": EXTERNAL_ID_MAX_LENGTH, "minLength": 1},
    OpenApiParameter.PATH,
    description="The session's id in your system.",
)


def _session_of(request: Request, session_id: str) -> Session:
    session_id = _session_id_checked(session_id)
    session = (
        Session.objects.select_related("user", "agent")
        .filter(agent=request_agent(request), external_id=session_id)
        .first()
    )
    if session is None:
        raise NotFoundError(f"No session {session_id!r}.", fields={"session": ["not found"]})
    return session


class SessionCreateView(APIView):
    @extend_schema(
        request=SessionCreateInputSerializer,
        responses={200: SessionOutputSerializer, 201: SessionOutputSerializer},
        summary="Create a session, or fetch it if it exists",
        examples=[examples.SESSION_CREATE_NEW_SESSION],
    )
    def post(self, request: Request) -> Response:
        data = SessionCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        agent = request_agent(request)
        existed = Session.objects.filter(agent=agent, external_id=data.validated_data["session"]).exists()
        session = session_get_or_create(
            agent=agent,
            user_external_id=data.validated_data["user"],
            session_external_id=data.validated_data["session"],
        )
        return Response(
            SessionOutputSerializer(session).data, status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED
        )


class SessionDetailView(APIView):
    @extend_schema(
        parameters=[SESSION_ID_PARAMETER],
        responses=SessionOutputSerializer,
        summary="A session and its formation state",
    )
    def get(self, request: Request, session_id: str) -> Response:
        return Response(SessionOutputSerializer(_session_of(request, session_id)).data)

    @extend_schema(
        parameters=[SESSION_ID_PARAMETER],
        request=None,
        responses={200: SessionDeletedOutputSerializer},
        summary="Delete a session: its messages, session memory and jobs",
        examples=[examples.SESSION_DELETED],
        description="Deletes the session's messages (and their embeddings), its session-scope reflections and blob "
        "(with past versions), its formation and consolidation jobs and its cached context. What formation already "
        "drew from it into the user's or the agent's memory (facts, user and agent reflections) stays, without its "
        "link to the session: erase the user (DELETE /api/v1/users/{user_id}) to remove that too.",
    )
    def delete(self, request: Request, session_id: str) -> Response:
        deleted = session_erase(session=_session_of(request, session_id))
        return Response(SessionDeletedOutputSerializer({"session": session_id, "deleted_counts": deleted}).data)


class MessagePagination(StrictCursorPagination):
    ordering = "id"
    page_size = 100


@extend_schema_view(get=extend_schema(parameters=[SESSION_ID_PARAMETER]))
class SessionMessagesView(ListAPIView):
    """GET: the session's messages, oldest first, cursor-paginated. POST: append one or more messages."""

    serializer_class = MessageOutputSerializer
    pagination_class = MessagePagination

    def get_queryset(self) -> QuerySet[Message]:
        return Message.objects.filter(session=_session_of(self.request, self.kwargs["session_id"]))

    @extend_schema(
        parameters=[SESSION_ID_PARAMETER],
        request=MessagesAppendInputSerializer,
        responses={201: MessagesAppendOutputSerializer, 200: MessagesAppendOutputSerializer},
        summary="Append messages (up to 500); the session is created on first use",
        description="Returns at once: memory formation runs in the background. A message whose idempotency_key "
        "the session already holds is returned as stored, not stored again (200 when nothing was new).",
        examples=[examples.SESSION_MESSAGES_TWO_TURNS],
    )
    def post(self, request: Request, session_id: str) -> Response:
        data = messages_append_input_validated(request.data)
        result = session_messages_ingest(
            agent=request_agent(request),
            user_external_id=data.get("user"),
            session_external_id=_session_id_checked(session_id),
            messages=[MessageInput(**message) for message in data["messages"]],
        )
        body = MessagesAppendOutputSerializer(
            {"session": result.session, "created_count": result.created_count, "messages": result.messages}
        ).data
        return Response(body, status=status.HTTP_201_CREATED if result.created_count else status.HTTP_200_OK)


class SessionCloseView(APIView):
    @extend_schema(
        parameters=[SESSION_ID_PARAMETER],
        request=None,
        responses={202: SessionOutputSerializer, 200: SessionOutputSerializer},
        summary="Close a session; form now",
        description="202 when this call closed the session and queued formation of what it has not formed yet; "
        "200 with the session unchanged when it was already closed (closing is idempotent).",
    )
    def post(self, request: Request, session_id: str) -> Response:
        session, closed_now = session_close_and_form(session=_session_of(request, session_id))
        return Response(
            SessionOutputSerializer(session).data, status=status.HTTP_202_ACCEPTED if closed_now else status.HTTP_200_OK
        )


class SessionFormView(APIView):
    @extend_schema(
        parameters=[SESSION_ID_PARAMETER],
        request=None,
        responses={202: FormationQueuedOutputSerializer},
        summary="Queue formation now",
    )
    def post(self, request: Request, session_id: str) -> Response:
        session = _session_of(request, session_id)
        queued = formation_request(session=session, trigger="explicit")
        session.refresh_from_db()
        return Response(
            FormationQueuedOutputSerializer({"session": session, "queued": queued}).data,
            status=status.HTTP_202_ACCEPTED,
        )
