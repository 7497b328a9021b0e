"""Consolidation jobs in the admin: status, duration, what they merged; retry queues a forced consolidation."""

from __future__ import annotations

from django.contrib import admin, messages

from console.utils import JobAdminMixin
from reflections.models import ConsolidationJob
from reflections.services.consolidation import ScopeKey
from reflections.services.curation import scope_consolidation_request


@admin.register(ConsolidationJob)
class ConsolidationJobAdmin(JobAdminMixin, admin.ModelAdmin):
    job_kind = "consolidation"
    list_display = [
        "id",
        "scope",
        "agent",
        "user",
        "session",
        "status",
        "started_at",
        "duration",
        "reflections_count",
        "produced_version",
        "short_error",
    ]
    list_select_related = ["agent", "user", "session"]
    list_filter = ["status", "scope", "agent"]
    search_fields = ["error", "user__external_id", "session__external_id"]
    date_hierarchy = "started_at"
    show_full_result_count = False
    actions = ["retry_jobs"]

    @admin.action(description="Retry: consolidate these jobs' scopes now (queued)")
    def retry_jobs(self, request, queryset) -> None:
        keys = {ScopeKey.of(job) for job in queryset}
        for key in keys:
            scope_consolidation_request(key=key)
        self.message_user(request, f"Consolidation queued for {len(keys)} scopes.", messages.SUCCESS)
