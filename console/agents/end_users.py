"""End users in the admin: what is stored about each, their profile by category, what changed about them (the
timeline), export, and erasure with its confirmation page."""

from __future__ import annotations

import json

from django.contrib import admin, messages
from django.http import HttpResponseRedirect, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone

from agents.models import EndUser
from console.facts.profile import profile_context
from console.facts.timeline import timeline_context
from console.utils import (
    FastActionCheckboxMixin,
    admin_change_url,
    admin_changelist_url,
    admin_operator,
)
from conversations.models import Session
from facts.models import Fact
from facts.selectors.timeline import timeline_scope_of_user
from portability.selectors.native_export import memories_export
from portability.selectors.user_memory import user_memory_counts, user_sessions_recent
from portability.services.erasure import user_erase
from reflections.models import ConsolidatedMemory, Reflection


@admin.register(EndUser)
class EndUserAdmin(FastActionCheckboxMixin, admin.ModelAdmin):
    """Users come from the API. Deleting one is an erasure (user_erase, with its audit record), never a plain
    cascade delete, so the admin's delete is replaced by "erase this user"."""

    list_display = ["external_id", "agent", "created_at"]
    list_select_related = ["agent"]
    list_filter = ["agent"]
    search_fields = ["external_id"]
    show_full_result_count = False
    fields = ["agent", "external_id", "metadata", "created_at", "updated_at"]
    readonly_fields = ["agent", "external_id", "created_at", "updated_at"]
    change_form_template = "admin/agents/enduser/change_form.html"

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def get_urls(self):
        return [
            path(
                "<int:object_id>/erase/",
                self.admin_site.admin_view(self.erase_view),
                name="agents_enduser_erase",
            ),
            path(
                "<int:object_id>/export/",
                self.admin_site.admin_view(self.export_view),
                name="agents_enduser_export",
            ),
            *super().get_urls(),
        ]

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            filters = {"agent__id__exact": obj.agent_id}
            context["memory_counts"] = user_memory_counts(user=obj).as_rows()
            context["memory_links"] = [
                ("current facts", admin_changelist_url(Fact, **filters, user=obj.external_id, status="current")),
                ("all fact versions", admin_changelist_url(Fact, **filters, user=obj.external_id)),
                ("reflections", admin_changelist_url(Reflection, user__id__exact=obj.pk)),
                ("blobs", admin_changelist_url(ConsolidatedMemory, user__id__exact=obj.pk)),
                ("sessions", admin_changelist_url(Session, user__id__exact=obj.pk)),
                (
                    "inspector",
                    reverse("admin:memory_inspector") + f"?agent={obj.agent_id}&user={obj.external_id}",
                ),
            ]
            context["recent_sessions"] = user_sessions_recent(user=obj, limit=10)
            scope = timeline_scope_of_user(agent=obj.agent, user=obj)
            context |= timeline_context(request, scope=scope, today=timezone.now().date())
            context |= profile_context(user=obj)
        return super().render_change_form(request, context, add, change, form_url, obj)

    def export_view(self, request, object_id: int):
        user = get_object_or_404(EndUser.objects.select_related("agent"), pk=object_id)
        lines = (json.dumps(row, ensure_ascii=False) + "\n" for row in memories_export(agent=user.agent, user=user))
        response = StreamingHttpResponse(lines, content_type="application/x-ndjson")
        response["Content-Disposition"] = f'attachment; filename="memory-{user.agent.external_id}-{user.pk}.jsonl"'
        return response

    def erase_view(self, request, object_id: int):
        user = get_object_or_404(EndUser.objects.select_related("agent"), pk=object_id)
        if request.method == "POST" and request.POST.get("confirm") == "yes":
            record = user_erase(user=user, requested_by=admin_operator(request))
            self.message_user(
                request,
                f"User erased: {sum(record.deleted_counts.values())} rows deleted; the audit record keeps no content.",
                messages.SUCCESS,
            )
            return HttpResponseRedirect(admin_change_url(record))
        context = {
            **self.admin_site.each_context(request),
            "title": f"Erase user {user.external_id}?",
            "subtitle": None,
            "opts": self.opts,
            "original": user,
            "memory_counts": user_memory_counts(user=user).as_rows(),
            "sessions": user_sessions_recent(user=user, limit=50),
        }
        return TemplateResponse(request, "admin/agents/enduser/erase_confirmation.html", context)
