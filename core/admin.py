from datetime import timedelta

from django.contrib import admin
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html

from core.admin_utils import FastActionCheckboxMixin, ReadOnlyAdminMixin
from core.models import (
    CorpusStatistics,
    CorpusStatisticsChange,
    EmbeddingSpace,
    ErasureRecord,
    LLMCall,
    SensitiveDataFinding,
)
from core.selectors.llm_usage import llm_reply_validity, llm_usage_agents, llm_usage_daily, llm_usage_windows


@admin.register(EmbeddingSpace)
class EmbeddingSpaceAdmin(admin.ModelAdmin):
    list_display = ["name", "provider", "model", "dimensions", "status", "created_at", "activated_at"]
    list_filter = ["status", "provider"]
    readonly_fields = ["name", "provider", "model", "dimensions", "status", "created_at", "activated_at"]


@admin.register(CorpusStatistics)
class CorpusStatisticsAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """What full-text search knows of each scope's size (kept by database triggers; docs/architecture.md). Changes
    not folded yet are listed on their own page; a scope's figures are the sum of both."""

    list_display = ["corpus", "scope_id", "space_id", "documents", "lexemes"]
    list_filter = ["corpus", "space_id"]
    search_fields = ["=scope_id"]

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(CorpusStatisticsChange)
class CorpusStatisticsChangeAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """Changes appended by the writes since the last fold (core.corpus_statistics_fold, every 30 s)."""

    list_display = ["corpus", "scope_id", "space_id", "documents", "lexemes"]
    list_filter = ["corpus"]

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ErasureRecord)
class ErasureRecordAdmin(admin.ModelAdmin):
    """An audit trail: read-only, and never deleted from the admin."""

    list_display = ["agent_external_id", "user_external_id_hash", "requested_by", "erased_at"]
    list_filter = ["agent_external_id"]
    search_fields = ["user_external_id_hash", "agent_external_id"]
    readonly_fields = [
        "agent",
        "agent_external_id",
        "user_external_id_hash",
        "deleted_counts",
        "requested_by",
        "erased_at",
    ]

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class LLMCallJobFilter(admin.SimpleListFilter):
    """The calls of one job, as linked from a formation or consolidation job's page (?job_kind=…&job_id=…)."""

    title = "job"
    parameter_name = "job_id"

    def lookups(self, request, model_admin):
        job_id = request.GET.get(self.parameter_name)
        return [(job_id, f"#{job_id}")] if job_id else []

    def queryset(self, request, queryset):
        return queryset.filter(job_id=self.value()) if self.value() else queryset


def _job_link(job_kind: str, job_id: int | None) -> str:
    if not job_id:
        return "-"
    model = {"formation": "conversations_formationjob", "consolidation": "reflections_consolidationjob"}.get(job_kind)
    if model is None:
        return f"{job_kind} #{job_id}"
    return format_html('<a href="{}">{} #{}</a>', reverse(f"admin:{model}_change", args=[job_id]), job_kind, job_id)


@admin.register(SensitiveDataFinding)
class SensitiveDataFindingAdmin(FastActionCheckboxMixin, admin.ModelAdmin):
    """Read-only: what the sensitive-data rules kept out of memory, never the secret itself. The agent's page sums
    them (those of failed jobs excluded: those stored nothing)."""

    list_display = ["created_at", "agent", "kind", "action", "target", "job"]
    list_select_related = ["agent"]
    list_filter = ["kind", "action", "target", "agent", ("created_at", admin.DateFieldListFilter)]
    show_full_result_count = False

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in SensitiveDataFinding._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="job")
    def job(self, finding: SensitiveDataFinding) -> str:
        return _job_link(finding.job_kind, finding.job_id)


@admin.register(LLMCall)
class LLMCallAdmin(FastActionCheckboxMixin, admin.ModelAdmin):
    """Read-only records of every LLM call; the usage page sums them per agent."""

    list_display = [
        "created_at",
        "agent",
        "purpose",
        "model",
        "prompt_tokens",
        "completion_tokens",
        "latency_ms",
        "outcome",
        "attempt",
        "job",
    ]
    list_select_related = ["agent"]
    list_filter = [
        "outcome",
        "purpose",
        "job_kind",
        LLMCallJobFilter,
        "agent",
        ("created_at", admin.DateFieldListFilter),
    ]
    search_fields = ["model", "purpose"]
    show_full_result_count = False
    change_list_template = "admin/core/llmcall/change_list.html"

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in LLMCall._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="job")
    def job(self, call: LLMCall) -> str:
        return _job_link(call.job_kind, call.job_id)

    def get_urls(self):
        return [
            path("usage/", self.admin_site.admin_view(self.usage_view), name="core_llmcall_usage"),
            *super().get_urls(),
        ]

    def usage_view(self, request):
        """Calls, tokens and failures per agent over the last day and week, and a chart of the last 14 days."""
        agent_id = int(request.GET["agent"]) if request.GET.get("agent", "").isdigit() else None
        daily = llm_usage_daily(days=14, agent_id=agent_id)
        context = {
            **self.admin_site.each_context(request),
            "title": "LLM usage: calls, tokens and failures",
            "subtitle": None,
            "opts": self.opts,
            "windows": llm_usage_windows(agent_id=agent_id),
            "validity": llm_reply_validity(since=timezone.now() - timedelta(days=7), agent_id=agent_id),
            "daily": daily,
            "daily_most_calls": max((day.calls for day in daily), default=0),
            "agents": llm_usage_agents(),
            "agent_id": agent_id,
        }
        return TemplateResponse(request, "admin/core/llmcall/usage.html", context)
