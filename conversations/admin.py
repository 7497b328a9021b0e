"""Agents, API keys, end users, sessions, messages and formation jobs in the admin, plus the memory inspector.
Actions call the same services as the API: formation and consolidation are queued, never run in the request."""

from __future__ import annotations

import json

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.paginator import Paginator
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce, Left
from django.http import HttpResponseNotAllowed, HttpResponseRedirect, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from conversations.models import Agent, AgentAPIKey, EndUser, FormationJob, Message, RetentionRun, Session
from conversations.selectors.agent_settings import OVERRIDABLE_SETTINGS, agent_thresholds
from conversations.selectors.formation_backlog import agents_spend_today, formation_backlog
from conversations.selectors.memory_scope import memory_scope_resolve
from conversations.selectors.session_detail import session_formation_jobs_recent, session_messages
from conversations.selectors.user_memory import user_memory_counts, user_sessions_recent
from conversations.services.api_keys import api_key_create, api_key_revoke
from conversations.services.erasure import user_erase
from conversations.services.formation_holds import (
    agent_daily_token_budget,
    formation_resume_soon,
    session_waiting_detail,
)
from conversations.services.formation_triggers import formation_request
from conversations.services.ingestion import session_close
from core.admin_utils import (
    FastActionCheckboxMixin,
    JobAdminMixin,
    ReadOnlyAdminMixin,
    TextInputFilter,
    admin_change_url,
    admin_changelist_url,
    admin_link,
    admin_operator,
    text_shorten,
)
from core.exceptions import ApplicationError
from core.llm.spend import day_end, llm_spend_today
from core.models import LLMCall, SensitiveDataFinding
from core.portability.native import memories_export
from core.selectors.sensitive_data import sensitive_data_counts, sensitive_findings_counted
from core.sensitive import SensitiveKind
from facts.models import Fact
from facts.selectors import SearchMode, facts_search
from reflections.models import ConsolidatedMemory, Reflection
from reflections.selectors.bundle import BundleLimits, memory_bundle_build
from reflections.selectors.context import memory_context_get

MESSAGES_PER_PAGE = 50
EXCERPT_CHARS = 100
DEFAULT_TOKEN_BUDGET = 4000


def _is_changelist(request) -> bool:
    return bool(request.resolver_match and request.resolver_match.url_name.endswith("_changelist"))


# --- agents and the memory inspector ---------------------------------------------------------------------------------


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
    list_filter = ["rag_enabled", "always_in_context_enabled", "sensitive_data", "agent_memory_from_users"]
    search_fields = ["external_id", "name"]
    readonly_fields = [
        "thresholds_in_force",
        "memory_links",
        "retention_runs_link",
        "sensitive_data_summary",
        "llm_spend_against_budget",
        "created_at",
        "updated_at",
    ]
    fieldsets = [
        (None, {"fields": ["external_id", "name", "memory_links"]}),
        ("Memory switches", {"fields": ["rag_enabled", "always_in_context_enabled", "profile_in_context"]}),
        ("Sensitive data (docs/security.md)", {"fields": ["sensitive_data", "sensitive_data_summary"]}),
        ("Memory poisoning (docs/security.md)", {"fields": ["agent_memory_from_users"]}),
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
        if not _is_changelist(request):
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
        return agent.secrets_kept_out_count

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
        return TemplateResponse(request, "admin/conversations/agent/formation.html", context)

    def inspector_view(self, request):
        """What the agent would receive for one message: the always-in-context block, the fact search hits with
        each signal's rank, and the bundle cut to the budget. Reads only; the query is embedded, no LLM is called."""
        form = InspectorForm(request.GET if "message" in request.GET else None, initial=request.GET.dict())
        result, error = None, ""
        if form.is_valid():
            data = form.cleaned_data
            agent = data["agent"]
            try:
                target = memory_scope_resolve(
                    agent=agent,
                    user_external_id=data["user"] or None,
                    session_external_id=data["session"] or None,
                )
                missing = [
                    f"{kind} {name!r}"
                    for kind, name, found in (
                        ("user", data["user"], target.user),
                        ("session", data["session"], target.session),
                    )
                    if name and found is None
                ]
                if missing:
                    error = f"{agent} has no {' and no '.join(missing)}: shown without it."
                context = memory_context_get(agent=agent, user=target.user, session=target.session)
                hits = (
                    facts_search(
                        agent=agent,
                        user=target.user,
                        query=data["message"],
                        top_k=10,
                        mode=data["mode"] or SearchMode.HYBRID,
                        record_access=False,
                    )
                    if agent.rag_enabled
                    else []
                )
                bundle = memory_bundle_build(
                    agent=agent,
                    user=target.user,
                    session=target.session,
                    query=data["message"],
                    token_budget=data["token_budget"] or DEFAULT_TOKEN_BUDGET,
                    limits=BundleLimits(),
                    record_access=False,
                )
                result = {"target": target, "context": context, "hits": hits, "bundle": bundle}
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
        return TemplateResponse(request, "admin/conversations/agent/inspector.html", context)


@admin.register(AgentAPIKey)
class AgentAPIKeyAdmin(admin.ModelAdmin):
    """Keys are created through the service (the raw key is shown once, in a message) and revoked, never edited."""

    list_display = ["prefix", "name", "agent", "created_at", "last_used_at", "revoked_at"]
    list_select_related = ["agent"]
    list_filter = ["agent", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["prefix", "name", "agent__external_id"]
    readonly_fields = ["prefix", "created_at", "last_used_at", "revoked_at"]
    autocomplete_fields = ["agent"]
    actions = ["revoke_keys"]

    def get_fields(self, request, obj=None):
        return ["agent", "name"] if obj is None else ["agent", "name", *self.readonly_fields]

    def get_readonly_fields(self, request, obj=None):
        return self.readonly_fields if obj is None else ["agent", *self.readonly_fields]

    def save_model(self, request, obj: AgentAPIKey, form, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        created, raw_key = api_key_create(agent=obj.agent, name=obj.name)
        obj.pk, obj.prefix, obj.key_digest, obj.created_at = (
            created.pk,
            created.prefix,
            created.key_digest,
            created.created_at,
        )
        messages.warning(request, f"Copy the new API key now; it will not be shown again: {raw_key}")

    @admin.action(description="Revoke the selected keys")
    def revoke_keys(self, request, queryset) -> None:
        for api_key in queryset.filter(revoked_at__isnull=True):
            api_key_revoke(api_key=api_key)
        messages.success(request, "Revoked.")


# --- end users --------------------------------------------------------------------------------------------------------


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
    change_form_template = "admin/conversations/enduser/change_form.html"

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def get_urls(self):
        return [
            path(
                "<int:object_id>/erase/",
                self.admin_site.admin_view(self.erase_view),
                name="conversations_enduser_erase",
            ),
            path(
                "<int:object_id>/export/",
                self.admin_site.admin_view(self.export_view),
                name="conversations_enduser_export",
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
        return TemplateResponse(request, "admin/conversations/enduser/erase_confirmation.html", context)


# --- sessions and messages --------------------------------------------------------------------------------------------


class SessionUserFilter(TextInputFilter):
    title = "user (external id)"
    parameter_name = "user_external_id"
    lookup = "user__external_id"


@admin.register(Session)
class SessionAdmin(FastActionCheckboxMixin, admin.ModelAdmin):
    list_display = [
        "external_id",
        "agent",
        "user",
        "message_count",
        "token_count",
        "formation_status",
        "formed_through_message_id",
        "last_formed_at",
        "last_activity_at",
        "closed_at",
    ]
    list_select_related = ["agent", "user"]
    list_filter = [
        "formation_status",
        "formation_waiting_reason",
        "agent",
        SessionUserFilter,
        ("closed_at", admin.EmptyFieldListFilter),
    ]
    search_fields = ["external_id"]
    date_hierarchy = "last_activity_at"
    show_full_result_count = False
    readonly_fields = [
        "agent_link",
        "user_link",
        "external_id",
        "started_at",
        "last_activity_at",
        "closed_at",
        "message_count",
        "token_count",
        "formation_status",
        "formation_waiting",
        "formed_through_message_id",
        "formation_queued_at",
        "last_formed_at",
        "metadata",
    ]
    fieldsets = [
        (None, {"fields": ["external_id", "agent_link", "user_link", "metadata"]}),
        ("Activity", {"fields": ["started_at", "last_activity_at", "closed_at", "message_count", "token_count"]}),
        (
            "Formation",
            {
                "fields": [
                    "formation_status",
                    "formation_waiting",
                    "formed_through_message_id",
                    "formation_queued_at",
                    "last_formed_at",
                ],
                "description": "Formation works on the messages after the cursor (formed through message) and moves "
                "it only when everything it produced is committed.",
            },
        ),
    ]
    actions = ["form_memories_now", "close_sessions"]
    change_form_template = "admin/conversations/session/change_form.html"

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # a session is a record of what happened; its actions are the buttons

    @admin.display(description="agent")
    def agent_link(self, session: Session) -> str:
        return admin_link(session.agent)

    @admin.display(description="user")
    def user_link(self, session: Session) -> str:
        return admin_link(session.user)

    @admin.display(description="waiting because")
    def formation_waiting(self, session: Session) -> str:
        return session_waiting_detail(session=session) or "-"

    def get_urls(self):
        return [
            path(
                "<int:object_id>/form-memories/",
                self.admin_site.admin_view(self.form_memories_view),
                name="conversations_session_form_memories",
            ),
            path(
                "<int:object_id>/close/",
                self.admin_site.admin_view(self.close_view),
                name="conversations_session_close",
            ),
            *super().get_urls(),
        ]

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            page = Paginator(session_messages(session=obj), MESSAGES_PER_PAGE).get_page(
                request.GET.get("messages_page")
            )
            context["messages_page"] = page
            context["formation_cursor"] = obj.formed_through_message_id or 0
            context["formation_jobs"] = session_formation_jobs_recent(session=obj)
        return super().render_change_form(request, context, add, change, form_url, obj)

    def _request_formation(self, request, session: Session) -> None:
        if formation_request(session=session, trigger=FormationJob.Trigger.EXPLICIT):
            self.message_user(request, f"Formation of {session} queued.", messages.SUCCESS)
        else:
            self.message_user(request, f"Formation of {session} is already queued or running.", messages.INFO)

    def form_memories_view(self, request, object_id: int):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        session = get_object_or_404(Session, pk=object_id)
        self._request_formation(request, session)
        return HttpResponseRedirect(admin_change_url(session))

    def close_view(self, request, object_id: int):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        session = get_object_or_404(Session, pk=object_id)
        _, closed_now = session_close(session=session)
        if closed_now:
            self.message_user(request, f"Session {session} closed; formation of what it has not formed is queued.")
        else:
            self.message_user(request, f"Session {session} was already closed; nothing changed.")
        return HttpResponseRedirect(admin_change_url(session))

    @admin.action(description="Form memories now (queued)")
    def form_memories_now(self, request, queryset) -> None:
        queued = sum(formation_request(session=session, trigger=FormationJob.Trigger.EXPLICIT) for session in queryset)
        self.message_user(request, f"Formation queued for {queued} sessions; the others were already queued.")

    @admin.action(description="Close selected sessions")
    def close_sessions(self, request, queryset) -> None:
        open_sessions = list(queryset.filter(closed_at__isnull=True))
        for session in open_sessions:
            session_close(session=session)
        self.message_user(request, f"Closed {len(open_sessions)} sessions; their formation is queued.")


class MessageSessionFilter(TextInputFilter):
    title = "session (external id)"
    parameter_name = "session_external_id"
    lookup = "session__external_id"


@admin.register(Message)
class MessageAdmin(FastActionCheckboxMixin, admin.ModelAdmin):
    """Messages are the record facts are traced back to: read-only here."""

    list_display = ["id", "session", "role", "short_content", "token_count", "created_at"]
    list_select_related = ["session"]
    list_filter = ["role", MessageSessionFilter]
    search_fields = ["content"]
    show_full_result_count = False
    fields = [
        "session_link",
        "role",
        "content",
        "token_count",
        "created_at",
        "stored_at",
        "idempotency_key",
        "metadata",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if not _is_changelist(request):
            return queryset
        # The list shows an excerpt: fetch only that much of each message, however long it is.
        return queryset.defer("content", "metadata").annotate(content_excerpt=Left("content", EXCERPT_CHARS + 1))

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="content")
    def short_content(self, message: Message) -> str:
        return text_shorten(getattr(message, "content_excerpt", None) or message.content, EXCERPT_CHARS)

    @admin.display(description="session")
    def session_link(self, message: Message) -> str:
        return admin_link(message.session)


# --- formation jobs -----------------------------------------------------------------------------------------------


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
        if not _is_changelist(request):
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


# The review queue lives in its own module; imported here so that the admin's autodiscovery registers it.
from conversations.admin_held_memory import HeldMemoryAdmin  # noqa: E402, F401
