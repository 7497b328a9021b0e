"""Reference documents and their chunks in the admin: registered through the API's service, then read-only."""

from __future__ import annotations

from django.contrib import admin, messages

from console.utils import text_shorten
from facts.models import ReferenceChunk, ReferenceDocument
from facts.services.reference_documents import reference_document_create


class ReferenceChunkInline(admin.TabularInline):
    model = ReferenceChunk
    fields = ("index", "content")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ReferenceDocument)
class ReferenceDocumentAdmin(admin.ModelAdmin):
    """Operators register documents here (chunked and embedded by reference_document_create, the API's service);
    a registered document is read-only: to change it, delete it and register the new text."""

    list_display = ["title", "agent", "created_at", "updated_at"]
    list_select_related = ["agent"]
    list_filter = ["agent"]
    search_fields = ["title"]
    autocomplete_fields = ["agent"]
    inlines = [ReferenceChunkInline]

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["agent", "title", "content"]
        return ["agent", "title", "content", "metadata", "content_hash", "created_at", "updated_at"]

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.get_fields(request, obj)

    def get_inlines(self, request, obj):
        return self.inlines if obj is not None else []

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        return queryset.defer("content") if request.resolver_match.url_name.endswith("_changelist") else queryset

    def has_change_permission(self, request, obj=None) -> bool:
        return obj is None

    def save_model(self, request, obj: ReferenceDocument, form, change: bool) -> None:
        document, created = reference_document_create(agent=obj.agent, title=obj.title, content=obj.content)
        obj.pk, obj.content_hash, obj.created_at = document.pk, document.content_hash, document.created_at
        if not created:
            messages.info(request, f"This text was already registered as “{document.title}”.")


@admin.register(ReferenceChunk)
class ReferenceChunkAdmin(admin.ModelAdmin):
    list_display = ["document", "index", "short_content"]
    list_select_related = ["document"]
    list_filter = ["document__agent"]
    search_fields = ["content", "document__title"]
    show_full_result_count = False
    fields = ("document", "index", "content")
    readonly_fields = fields

    @admin.display(description="content")
    def short_content(self, chunk: ReferenceChunk) -> str:
        return text_shorten(chunk.content, 120)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
