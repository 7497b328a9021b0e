"""Every LLM call with its purpose, tokens, latency and outcome, and the usage page (calls, tokens, failures and
reply validity per agent and step)."""

from datetime import timedelta

from django.contrib import admin
from django.template.response import TemplateResponse
from django.urls import path
from django.utils import timezone

from console.utils import FastActionCheckboxMixin, admin_job_link
from core.models import LLMCall
from core.selectors.llm_usage import llm_usage_agents, llm_usage_daily, llm_usage_windows
from formation.selectors.llm_validity import llm_reply_validity


class LLMCallJobFilter(admin.SimpleListFilter):
    """The calls of one job, as linked from a formation or consolidation job's page (?job_kind=…&job_id=…)."""

    title = "job"
    parameter_name = "job_id"

    def lookups(self, request, model_admin):
        job_id = request.GET.get(self.parameter_name)
        return [(job_id, f"#{job_id}")] if job_id else []

    def queryset(self, request, queryset):
        return queryset.filter(job_id=self.value()) if self.value() else queryset


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
        return admin_job_link(call.job_kind, call.job_id)

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
