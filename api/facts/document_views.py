"""Reference documents an agent always has available: facts that only restate them are not stored as memory."""

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.authentication import request_agent
from api.facts import examples
from core.api.fields import MetadataField, StrictCharField
from core.api.pagination import StrictCursorPagination
from core.exceptions import NotFoundError
from facts.models import ReferenceDocument
from facts.services.reference_documents import reference_document_create, reference_document_delete

MAX_DOCUMENT_CHARS = 1_000_000


class DocumentCreateInputSerializer(serializers.Serializer):
    title = StrictCharField(max_length=300)
    content = StrictCharField(max_length=MAX_DOCUMENT_CHARS)
    metadata = MetadataField(required=False, default=dict)


class DocumentOutputSerializer(serializers.ModelSerializer):
    chunk_count = serializers.IntegerField(source="chunks.count", read_only=True)

    class Meta:
        model = ReferenceDocument
        fields = ["id", "title", "content", "metadata", "chunk_count", "created_at"]


def _document_of(request: Request, document_id: int) -> ReferenceDocument:
    document = ReferenceDocument.objects.filter(agent=request_agent(request), pk=document_id).first()
    if document is None:
        raise NotFoundError(f"No document {document_id}.", fields={"id": ["not found"]})
    return document


class DocumentListView(ListAPIView):
    """GET: the agent's reference documents, newest first. POST: register one."""

    serializer_class = DocumentOutputSerializer
    pagination_class = StrictCursorPagination

    def get_queryset(self) -> QuerySet[ReferenceDocument]:
        return ReferenceDocument.objects.filter(agent=request_agent(self.request)).order_by("-created_at", "-id")

    @extend_schema(
        request=DocumentCreateInputSerializer,
        responses={201: DocumentOutputSerializer, 200: DocumentOutputSerializer},
        summary="Register a reference document (the same text twice is stored once: 200)",
        examples=[examples.DOCUMENT_LIST_RETURNS_POLICY],
    )
    def post(self, request: Request) -> Response:
        data = DocumentCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        document, created = reference_document_create(agent=request_agent(request), **data.validated_data)
        return Response(
            DocumentOutputSerializer(document).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )


class DocumentDetailView(APIView):
    @extend_schema(responses=DocumentOutputSerializer, summary="A reference document")
    def get(self, request: Request, document_id: int) -> Response:
        return Response(DocumentOutputSerializer(_document_of(request, document_id)).data)

    @extend_schema(responses={204: None}, summary="Remove a reference document and its chunks")
    def delete(self, request: Request, document_id: int) -> Response:
        reference_document_delete(document=_document_of(request, document_id))
        return Response(status=status.HTTP_204_NO_CONTENT)
