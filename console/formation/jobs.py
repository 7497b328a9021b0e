"""Formation jobs and retention runs in the admin."""

from __future__ import annotations

from django.contrib import admin
from django.db.models.functions import Left

from console.utils import (
    FastActionCheckboxMixin,
    JobAdminMixin,
    ReadOnlyAdminMixin,
    admin_is_changelist,
)
from conversations.models import Session
from formation.models import FormationJob, RetentionRun
from formation.services.formation_triggers import formation_request


@admin.register(FormationJob)
class FormationJobAdmin(JobAdminMixin, FastActionCheckboxMixin, admin.ModelAdmin):
    job_kind = "formation"
    list_display = [
        "id",
        "session",
        "trigger",
        "status",
        "started_at",
        "duration",
        "message_count",
        "facts_added",
        "facts_updated",
        "facts_deleted",
        "reflections_added",
        "short_error",
    ]
    list_select_related = ["session"]
    list_filter = ["status", "trigger", ("session__agent", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["session__external_id", "error"]
    date_hierarchy = "started_at"
    show_full_result_count = False
    actions = ["retry_jobs"]

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        # A failed job keeps its whole input for replay: the list has no use for it.
        if not admin_is_changelist(request):
            return queryset
        return queryset.defer("input", "error").annotate(error_excerpt=Left("error", 81))

    @admin.action(description="Retry: queue formation of these jobs' sessions")
    def retry_jobs(self, request, queryset) -> None:
        sessions = Session.objects.filter(pk__in=queryset.values("session_id"))
        queued = sum(formation_request(session=session, trigger=FormationJob.Trigger.EXPLICIT) for session in sessions)
        self.message_user(
            request, f"Formation queued for {queued} sessions; sessions already queued or running were left alone."
        )


@admin.register(RetentionRun)
class RetentionRunAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """What each retention pass evicted; written by the retention job only."""

    list_display = ["agent", "started_at", "finished_at", "facts_closed", "message_embeddings_dropped"]
    list_select_related = ["agent"]
    list_filter = ["agent"]
    date_hierarchy = "started_at"
    show_full_result_count = False
