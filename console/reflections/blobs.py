"""Consolidated blobs and their past versions in the admin. An edit of a blob is a new version through
consolidated_memory_replace (which invalidates the cached context blocks, and makes the text the blob's curated part);
consolidation is queued, never run here."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models.functions import Left
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path

from console.utils import (
    admin_change_url,
    admin_is_changelist,
    admin_link,
    admin_operator,
)
from core.exceptions import ApplicationError
from reflections.models import (
    ConsolidatedMemory,
    ConsolidatedMemoryVersion,
)
from reflections.selectors.blob_history import (
    consolidated_memory_diff,
    consolidated_memory_versions,
    scope_reflections,
)
from reflections.services.consolidation import ScopeKey, consolidated_memory_replace
from reflections.services.curation import (
    consolidated_memory_restore,
    scope_consolidation_request,
)

BUFFER_SHOWN = 100


class BlobEditForm(forms.ModelForm):
    reason = forms.CharField(max_length=300, initial="edited by an operator")
    expected_version = forms.IntegerField(widget=forms.HiddenInput)

    class Meta:
        model = ConsolidatedMemory
        fields = ["content"]
        widgets = {"content": forms.Textarea(attrs={"rows": 16, "cols": 100})}

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.initial.setdefault("expected_version", self.instance.version)

    def clean_expected_version(self) -> int:
        expected = self.cleaned_data["expected_version"]
        current = ConsolidatedMemory.objects.filter(pk=self.instance.pk).values_list("version", flat=True).first()
        if current != expected:
            raise forms.ValidationError(
                f"The blob changed while you were editing (now version {current}); reload the page and edit again."
            )
        return expected


@admin.register(ConsolidatedMemory)
class ConsolidatedMemoryAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "scope",
        "agent",
        "user",
        "session",
        "version",
        "word_count",
        "word_limit",
        "last_consolidated_at",
    ]
    list_select_related = ["agent", "user", "session"]
    list_filter = ["scope", "agent"]
    search_fields = ["content", "user__external_id", "session__external_id"]
    show_full_result_count = False
    form = BlobEditForm
    readonly_fields = [
        "agent",
        "scope",
        "user",
        "session",
        "version",
        "word_limit",
        "change_reason",
        "last_consolidated_at",
        "updated_at",
    ]
    fieldsets = [
        (None, {"fields": ["agent", "scope", "user", "session"]}),
        ("Current version", {"fields": ["version", "content", "reason", "expected_version", "word_limit"]}),
        ("Provenance", {"fields": ["change_reason", "last_consolidated_at", "updated_at"]}),
    ]
    actions = ["consolidate_now"]
    change_form_template = "admin/reflections/consolidatedmemory/change_form.html"

    def has_add_permission(self, request) -> bool:
        return False  # a scope's first blob comes from consolidating its buffer

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if not admin_is_changelist(request):
            return queryset
        return queryset.defer("content").annotate(content_head=Left("content", 20_000))

    @admin.display(description="words")
    def word_count(self, memory: ConsolidatedMemory) -> int:
        return len((getattr(memory, "content_head", None) or memory.content).split())

    def save_model(self, request, obj: ConsolidatedMemory, form: BlobEditForm, change: bool) -> None:
        saved = consolidated_memory_replace(
            agent=obj.agent,
            scope=obj.scope,
            user=obj.user,
            session=obj.session,
            content=form.cleaned_data["content"],
            reason=f"{form.cleaned_data['reason']} ({admin_operator(request)})",
            expected_version=form.cleaned_data["expected_version"],
            curated=True,
        )
        obj.version, obj.content = saved.version, saved.content

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            buffer = scope_reflections(memory=obj)
            context["versions"] = consolidated_memory_versions(memory=obj)
            context["buffer"] = buffer[:BUFFER_SHOWN]
            context["buffered_count"] = buffer.filter(absorbed=False).count()
        return super().render_change_form(request, context, add, change, form_url, obj)

    def get_urls(self):
        return [
            path(
                "<int:object_id>/consolidate/",
                self.admin_site.admin_view(self.consolidate_view),
                name="reflections_consolidatedmemory_consolidate",
            ),
            path(
                "<int:object_id>/restore/<int:version>/",
                self.admin_site.admin_view(self.restore_view),
                name="reflections_consolidatedmemory_restore",
            ),
            path(
                "<int:object_id>/diff/",
                self.admin_site.admin_view(self.diff_view),
                name="reflections_consolidatedmemory_diff",
            ),
            *super().get_urls(),
        ]

    def _consolidation_queue(self, request, memory: ConsolidatedMemory) -> None:
        scope_consolidation_request(key=ScopeKey.of(memory))
        if scope_reflections(memory=memory).filter(absorbed=False).exists():
            self.message_user(
                request,
                f"Consolidation of {memory} queued: a new version appears here when the worker is done.",
                messages.SUCCESS,
            )
        else:
            self.message_user(
                request, f"Consolidation of {memory} queued, but its buffer is empty: there may be nothing to merge."
            )

    def consolidate_view(self, request, object_id: int):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        memory = get_object_or_404(ConsolidatedMemory, pk=object_id)
        self._consolidation_queue(request, memory)
        return HttpResponseRedirect(admin_change_url(memory))

    def restore_view(self, request, object_id: int, version: int):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        memory = get_object_or_404(ConsolidatedMemory.objects.select_related("agent", "user", "session"), pk=object_id)
        try:
            restored = consolidated_memory_restore(memory=memory, version=version, requested_by=admin_operator(request))
        except ApplicationError as error:
            self.message_user(request, error.message, messages.ERROR)
        else:
            self.message_user(request, f"Version {version} restored as version {restored.version}.", messages.SUCCESS)
        return HttpResponseRedirect(admin_change_url(memory))

    def diff_view(self, request, object_id: int):
        memory = get_object_or_404(ConsolidatedMemory, pk=object_id)
        newer = int(request.GET.get("to") or memory.version)
        older = int(request.GET.get("from") or max(newer - 1, 1))
        try:
            diff = consolidated_memory_diff(memory=memory, older_version=older, newer_version=newer)
        except ApplicationError as error:
            self.message_user(request, error.message, messages.ERROR)
            return HttpResponseRedirect(admin_change_url(memory))
        context = {
            **self.admin_site.each_context(request),
            "title": f"{memory}: version {older} → {newer}",
            "subtitle": None,
            "opts": self.opts,
            "original": memory,
            "diff": diff,
            "versions": consolidated_memory_versions(memory=memory),
        }
        return TemplateResponse(request, "admin/reflections/consolidatedmemory/diff.html", context)

    @admin.action(description="Consolidate now (queued)")
    def consolidate_now(self, request, queryset) -> None:
        for memory in queryset:
            self._consolidation_queue(request, memory)


@admin.register(ConsolidatedMemoryVersion)
class ConsolidatedMemoryVersionAdmin(admin.ModelAdmin):
    list_display = ["memory", "version", "change_reason", "created_at", "replaced_at"]
    list_select_related = ["memory"]
    list_filter = ["memory__scope", "memory__agent"]
    search_fields = ["content"]
    date_hierarchy = "replaced_at"
    show_full_result_count = False
    readonly_fields = ("memory_link", "version", "content", "word_limit", "change_reason", "created_at", "replaced_at")
    fields = readonly_fields

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="blob")
    def memory_link(self, version: ConsolidatedMemoryVersion) -> str:
        return admin_link(version.memory)
