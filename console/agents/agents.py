"""Agents in the admin: their switches, thresholds, trust, budgets and memory links; the memory inspector and the
formation page."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import admin
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from agents.models import Agent, EndUser
from agents.selectors.agent_settings import OVERRIDABLE_SETTINGS, agent_daily_token_budget, agent_thresholds
from agents.selectors.categories import agent_categories
from console.utils import (
    admin_changelist_url,
    admin_is_changelist,
)
from conversations.models import Session
from core.exceptions import ApplicationError
from core.llm.spend import day_end, llm_spend_today
from core.models import LLMCall, SensitiveDataFinding
from core.safety.sensitive import SensitiveKind
from facts.models import Fact, FactFeedback, FeedbackRating
from facts.selectors import SearchMode
from facts.selectors.feedback import agent_feedback_counts
from formation.models import RetentionRun
from formation.selectors.formation_backlog import agents_spend_today, formation_backlog
from formation.selectors.sensitive_data import sensitive_data_counts, sensitive_findings_counted
from formation.services.formation_holds import formation_resume_soon
from reflections.models import ConsolidatedMemory, Reflection
from reflections.selectors.inspection import memory_inspect

DEFAULT_TOKEN_BUDGET = 4000


class InspectorForm(forms.Form):
    agent = forms.ModelChoiceField(queryset=Agent.objects.order_by("external_id"))
    user = forms.CharField(required=False, label="user (external id)")
    session = forms.CharField(required=False, label="session (external id)", help_text="Names its user by itself.")
    message = forms.CharField(
        label="message",
        widget=forms.Textarea(attrs={"rows": 3, "cols": 80, "placeholder": "What the user says next"}),
    )
    token_budget = forms.IntegerField(min_value=50, max_value=100_000, initial=DEFAULT_TOKEN_BUDGET, required=False)
    mode = forms.ChoiceField(
        choices=SearchMode.choices, initial=SearchMode.HYBRID, required=False, label="fact search mode"
    )


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = [
        "external_id",
        "name",
        "rag_enabled",
        "always_in_context_enabled",
        "sensitive_data",
        "secrets_kept_out",
        "llm_spend_against_budget",
        "created_at",
    ]
    list_editable = ["rag_enabled", "always_in_context_enabled"]
    list_filter = ["rag_enabled", "always_in_context_enabled", "sensitive_data", "agent_memory_from_users", "reranker"]
    search_fields = ["external_id", "name"]
    readonly_fields = [
        "thresholds_in_force",
        "categories_in_force",
        "memory_links",
        "retention_runs_link",
        "sensitive_data_summary",
        "llm_spend_against_budget",
        "feedback_summary",
        "created_at",
        "updated_at",
    ]
    fieldsets = [
        (None, {"fields": ["external_id", "name", "memory_links"]}),
        ("Memory switches", {"fields": ["rag_enabled", "always_in_context_enabled", "profile_in_context"]}),
        ("Sensitive data (docs/security.md)", {"fields": ["sensitive_data", "sensitive_data_summary"]}),
        ("Memory poisoning (docs/security.md)", {"fields": ["agent_memory_from_users"]}),
        ("Search (docs/operations/runbook.md, Run a reranker)", {"fields": ["reranker"]}),
        ("Feedback on facts", {"fields": ["feedback_summary"]}),
        (
            "Memory categories and extraction (docs/formation.md)",
            {
                "fields": [
                    "memory_categories",
                    "default_categories_enabled",
                    "categories_never_remembered",
                    "extraction_instructions",
                    "categories_in_force",
                ]
            },
        ),
        (
            "Thresholds (empty: the deployment's setting applies)",
            {"fields": [*OVERRIDABLE_SETTINGS, "thresholds_in_force"]},
        ),
        (
            "Retention caps (empty: no cap; evicted facts are closed, pinned ones kept)",
            {
                "fields": [
                    "max_current_facts_per_user",
                    "max_current_facts_per_agent",
                    "max_embedded_messages_per_session",
                    "retention_runs_link",
                ]
            },
        ),
        (
            "Cost guard (empty: LLM_AGENT_DAILY_TOKEN_BUDGET applies)",
            {"fields": ["llm_daily_token_budget", "llm_spend_against_budget"]},
        ),
        ("Provenance", {"fields": ["created_at", "updated_at"]}),
    ]

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if not admin_is_changelist(request):
            return queryset
        counted = (
            sensitive_findings_counted()
            .filter(agent=OuterRef("pk"))
            .order_by()
            .values("agent")
            .annotate(n=Count("id"))
            .values("n")
        )
        return queryset.annotate(secrets_kept_out_count=Coalesce(Subquery(counted), 0))

    @admin.display(description="secrets kept out", ordering="secrets_kept_out_count")
    def secrets_kept_out(self, agent: Agent) -> int:
        return agent.secrets_kept_out_count  # type: ignore[attr-defined]  # annotated by get_queryset

    @admin.display(description="feedback")
    def feedback_summary(self, agent: Agent) -> str:
        if agent.pk is None:
            return "-"
        counts, pending = agent_feedback_counts(agent_id=agent.pk)
        if not counts:
            return "No feedback on this agent's facts yet."
        shown = ", ".join(f"{rating} {counts[rating]}" for rating in FeedbackRating.values if counts[rating])
        link = admin_changelist_url(FactFeedback, agent__id__exact=agent.pk, outcome__exact="pending_review")
        return format_html('{}; <a href="{}">{} waiting for review</a>', shown, link, pending)

    @admin.display(description="kept out of memory")
    def sensitive_data_summary(self, agent: Agent) -> str:
        if agent.pk is None:
            return "-"
        counts = sensitive_data_counts(agent_id=agent.pk)
        if not counts:
            return "No secret found in what formation or the save tool stored so far."
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (SensitiveKind(kind).label, counts[(kind, "withheld")], counts[(kind, "redacted")])
                for kind in SensitiveKind.values
                if counts[(kind, "withheld")] or counts[(kind, "redacted")]
            ),
        )
        link = admin_changelist_url(SensitiveDataFinding, agent__id__exact=agent.pk)
        return format_html(
            '<table><tr><th>kind</th><th>withheld</th><th>redacted</th></tr>{}</table><a href="{}">each finding</a>',
            rows,
            link,
        )

    @admin.display(description="LLM tokens today / budget")
    def llm_spend_against_budget(self, agent: Agent) -> str:
        if agent.pk is None:
            return "-"
        spent, budget = llm_spend_today(agent_id=agent.pk), agent_daily_token_budget(agent=agent)
        if not budget:
            return f"{spent:,} (no budget)"
        return format_html(
            '<span class="{}">{} / {} ({}%)</span>',
            "errornote" if spent >= budget else "",
            f"{spent:,}",
            f"{budget:,}",
            min(100, round(100 * spent / budget)),
        )

    def save_model(self, request, obj: Agent, form, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if "llm_daily_token_budget" in form.changed_data:
            formation_resume_soon()  # sessions that waited for the old budget go now if the new one allows

    @admin.display(description="retention runs")
    def retention_runs_link(self, agent: Agent) -> str:
        if agent.pk is None:
            return "-"
        return format_html(
            '<a href="{}">what retention evicted</a>', admin_changelist_url(RetentionRun, agent__id__exact=agent.pk)
        )

    @admin.display(description="categories in force")
    def categories_in_force(self, agent: Agent) -> str:
        """The categories formation files this agent's memory under (agent_categories), and those it drops."""
        if agent.pk is None:
            return "-"
        filed = ", ".join(category.slug for category in agent_categories(agent=agent))
        dropped = ", ".join(agent.categories_never_remembered or ()) or "none"
        return f"filed under: {filed}; never remembered: {dropped}"

    @admin.display(description="in force")
    def thresholds_in_force(self, agent: Agent) -> str:
        if agent.pk is None:
            return "-"
        thresholds = agent_thresholds(agent=agent)
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    name.replace("_", " "),
                    getattr(thresholds, name),
                    "this agent" if getattr(agent, name) is not None else setting,
                )
                for name, setting in OVERRIDABLE_SETTINGS.items()
            ),
        )
        return format_html("<table><tr><th>threshold</th><th>value</th><th>from</th></tr>{}</table>", rows)

    @admin.display(description="memory")
    def memory_links(self, agent: Agent) -> str:
        if agent.pk is None:
            return "-"
        links = [
            ("users", admin_changelist_url(EndUser, agent__id__exact=agent.pk)),
            ("sessions", admin_changelist_url(Session, agent__id__exact=agent.pk)),
            ("current facts", admin_changelist_url(Fact, agent__id__exact=agent.pk, status="current")),
            ("reflections", admin_changelist_url(Reflection, agent__id__exact=agent.pk)),
            ("blobs", admin_changelist_url(ConsolidatedMemory, agent__id__exact=agent.pk)),
            ("LLM calls", admin_changelist_url(LLMCall, agent__id__exact=agent.pk)),
            ("LLM usage", reverse("admin:core_llmcall_usage") + f"?agent={agent.pk}"),
            ("inspector", reverse("admin:memory_inspector") + f"?agent={agent.pk}"),
        ]
        return format_html_join(" · ", '<a href="{}">{}</a>', ((url, label) for label, url in links))

    def get_urls(self):
        return [
            path("inspector/", self.admin_site.admin_view(self.inspector_view), name="memory_inspector"),
            path("formation/", self.admin_site.admin_view(self.formation_view), name="formation_status"),
            *super().get_urls(),
        ]

    def formation_view(self, request):
        """The formation backlog, the LLM provider's circuit breaker, and today's LLM tokens against each agent's
        budget."""
        context = {
            **self.admin_site.each_context(request),
            "title": "Formation: backlog, provider and budgets",
            "subtitle": None,
            "opts": self.opts,
            "backlog": formation_backlog(),
            "spends": agents_spend_today(),
            "global_budget": settings.LLM_DAILY_TOKEN_BUDGET,
            "global_spent": llm_spend_today(agent_id=None),
            "renews_at": day_end(),
        }
        return TemplateResponse(request, "admin/agents/agent/formation.html", context)

    def inspector_view(self, request):
        """What the agent would receive for one message: the always-in-context block, the fact search hits with
        each signal's rank, and the bundle cut to the budget. Reads only; the query is embedded, no LLM is called."""
        form = InspectorForm(request.GET if "message" in request.GET else None, initial=request.GET.dict())
        result, error = None, ""
        if form.is_valid():
            data = form.cleaned_data
            agent = data["agent"]
            try:
                result = memory_inspect(
                    agent=agent,
                    user_external_id=data["user"] or None,
                    session_external_id=data["session"] or None,
                    message=data["message"],
                    token_budget=data["token_budget"] or DEFAULT_TOKEN_BUDGET,
                    mode=data["mode"] or SearchMode.HYBRID,
                )
                if result.missing:
                    error = f"{agent} has no {' and no '.join(result.missing)}: shown without it."
            except ApplicationError as failure:
                error = failure.message
        context = {
            **self.admin_site.each_context(request),
            "title": "Memory inspector",
            "subtitle": None,
            "opts": self.opts,
            "form": form,
            "result": result,
            "error": error,
        }
        return TemplateResponse(request, "admin/agents/agent/inspector.html", context)
