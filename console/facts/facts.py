"""Facts in the admin. Every write goes through facts.services.facts: an edit supersedes the fact (a new version,
re-embedded), a delete closes it, and only the explicit erase action destroys rows. A fact's page shows its two
clocks apart: when its statement held in the world (editable: an end given is a change in the world, recorded as a
new version) and when memory recorded this version (formed, valid from and to, its version history)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.contrib.postgres.search import SearchQuery
from django.db.models import Q, QuerySet
from django.http import HttpResponseRedirect, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from console.facts.filters import (
    FactCategoryFilter,
    FactScopeFilter,
    FactSourceSessionFilter,
    FactStatusFilter,
    FactTagFilter,
    FactUserFilter,
    FactWorldTimeFilter,
)
from console.facts.forms import FactForm, FactScopeChangeForm, FactSearchForm
from console.facts.timeline import world_time_text
from console.utils import (
    FastActionCheckboxMixin,
    admin_change_url,
    admin_changelist_url,
    admin_link,
    admin_operator,
    text_shorten,
)
from conversations.selectors.memory_scope import memory_scope_resolve
from core.exceptions import ApplicationError
from core.models import TEXT_SEARCH_CONFIG
from facts.models import Fact, FactFeedback, FactWriter, FeedbackRating
from facts.selectors import facts_search
from facts.selectors.export import facts_export_lines
from facts.selectors.feedback import fact_feedback_counts
from facts.selectors.versions import fact_versions
from facts.services.facts import (
    fact_close,
    fact_create,
    fact_supersede,
    facts_close,
    facts_erase,
    facts_pin,
    facts_reembed_request,
    facts_scope_change,
)
from facts.world_time import TimePrecision


@admin.register(Fact)
class FactAdmin(FastActionCheckboxMixin, admin.ModelAdmin):
    form = FactForm
    list_display = [
        "id",
        "short_content",
        "scopes",
        "agent",
        "user",
        "version",
        "status",
        "category",
        "in_the_world",
        "formed_at",
        "access_count",
    ]
    list_display_links = ["id", "short_content"]
    list_select_related = ["agent", "user"]
    list_filter = [
        FactStatusFilter,
        FactWorldTimeFilter,
        FactScopeFilter,
        FactCategoryFilter,
        "pinned",
        "agent",
        FactUserFilter,
        FactTagFilter,
        FactSourceSessionFilter,
    ]
    search_fields = ["content"]
    search_help_text = (
        'Full-text search of the content (English stemming; "a phrase", -word and or work). To see what an agent '
        "would retrieve for a question, use Semantic search."
    )
    show_full_result_count = False
    autocomplete_fields = ["agent"]
    raw_id_fields = ["user"]
    # When memory recorded this version (its own clock), then where it came from.
    readonly_recorded = [
        "lineage",
        "version",
        "version_history_link",
        "status",
        "formed_at",
        "valid_from",
        "valid_to",
        "change_reason",
        "closed_reason",
        "superseded_by_link",
    ]
    readonly_provenance = [
        "key",
        "category",
        "category_value",
        "pinned",
        "source_session_link",
        "source_messages_links",
        "closed_by_messages_links",
        "access_count",
        "last_accessed_at",
        "expires_at",
        "feedback_counts",
        "metadata",
    ]
    actions = [
        "reembed_selected",
        "close_selected",
        "pin_selected",
        "unpin_selected",
        "change_scope_of_selected",
        "export_selected",
        "erase_selected",
    ]
    change_list_template = "admin/facts/fact/change_list.html"
    delete_confirmation_template = "admin/facts/fact/close_confirmation.html"

    # --- lists ---------------------------------------------------------------------------------------------------

    def get_queryset(self, request):
        # The generated tsvector is only for the database to search with; never ship it to Python.
        return super().get_queryset(request).defer("search_vector", "content_hash")

    def get_search_results(self, request, queryset, search_term):
        if not search_term.strip():
            return queryset, False
        query = SearchQuery(search_term, search_type="websearch", config=TEXT_SEARCH_CONFIG)
        matches = Q(search_vector=query)
        if search_term.strip().isdigit():
            matches |= Q(pk=int(search_term))
        return queryset.filter(matches), False

    @admin.display(description="content")
    def short_content(self, fact: Fact) -> str:
        return text_shorten(fact.content, 120)

    @admin.display(description="status")
    def status(self, fact: Fact) -> str:
        if fact.valid_to is None:
            return "current"
        return "superseded" if fact.superseded_by_id else "closed"

    @admin.display(description="in the world")
    def in_the_world(self, fact: Fact) -> str:
        world = fact.world_time
        if not world.known:
            return "-"
        return world_time_text(world) + ("" if world.holds_on(timezone.now().date()) else " (not now)")

    @admin.display(description="held")
    def world_time_held(self, fact: Fact) -> str:
        world = fact.world_time
        if not world.known:
            return "not known"
        parts = []
        if world.start is not None:
            parts.append(f"from {world.start.isoformat()} ({world.start_precision})")
        if world.end_precision == TimePrecision.UNKNOWN:
            parts.append("until a time not known: it ended")
        elif world.end is not None:
            parts.append(f"until {world.end.isoformat()} ({world.end_precision})")
        return ", ".join(parts)

    @admin.display(description="holds now", boolean=True)
    def holds_now(self, fact: Fact) -> bool:
        return fact.world_time.holds_on(timezone.now().date())

    @admin.display(description="versions")
    def version_history_link(self, fact: Fact) -> str:
        count = Fact.objects.filter(lineage=fact.lineage).count()
        url = reverse("admin:facts_fact_history", args=[fact.pk])
        return format_html('<a href="{}">{} version{} (history)</a>', url, count, "" if count == 1 else "s")

    @admin.display(description="superseded by")
    def superseded_by_link(self, fact: Fact) -> str:
        return admin_link(fact.superseded_by, f"#{fact.superseded_by_id}") if fact.superseded_by_id else "-"

    @admin.display(description="source session")
    def source_session_link(self, fact: Fact) -> str:
        return admin_link(fact.source_session)

    @staticmethod
    def _messages_links(messages_: QuerySet) -> str:
        links = format_html_join(
            "",
            '<li><a href="{}">#{}</a> {}: {}</li>',
            ((admin_change_url(m), m.pk, m.role, text_shorten(m.content, 160)) for m in messages_),
        )
        return format_html("<ul>{}</ul>", links) if links else "-"

    @admin.display(description="feedback")
    def feedback_counts(self, fact: Fact) -> str:
        counts = fact_feedback_counts(lineage=fact.lineage)
        if not counts:
            return "-"
        link = admin_changelist_url(FactFeedback, lineage=fact.lineage)
        shown = ", ".join(f"{rating} {counts[rating]}" for rating in FeedbackRating.values if counts[rating])
        return format_html('{} (<a href="{}">each</a>)', shown, link)

    @admin.display(description="source messages")
    def source_messages_links(self, fact: Fact) -> str:
        return self._messages_links(fact.source_messages.order_by("id"))

    @admin.display(description="closed by messages")
    def closed_by_messages_links(self, fact: Fact) -> str:
        return self._messages_links(fact.closed_by_messages.order_by("id"))

    # --- the change form: an edit writes a new version ------------------------------------------------------------

    def get_fieldsets(self, request, obj=None):
        world_note = "When the statement held in the world, apart from when memory recorded it."
        if obj is None:
            return [
                (None, {"fields": ["agent", "user", "scopes", "content", "tags", "reason"]}),
                ("In the world", {"fields": ["world_start", "world_end"], "description": world_note}),
            ]
        changeable = self.has_change_permission(request, obj)
        world = ["world_start", "world_end", "holds_now"] if changeable else ["world_time_held", "holds_now"]
        return [
            (None, {"fields": ["agent", "user", "scopes", "content", "tags", *(["reason"] if changeable else [])]}),
            ("In the world", {"fields": world, "description": world_note}),
            (
                "Recorded",
                {
                    "fields": self.readonly_recorded,
                    "description": "When memory held this version (its own clock, what `as_of` reads).",
                },
            ),
            ("Provenance", {"fields": self.readonly_provenance}),
        ]

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return []
        return ["agent", "world_time_held", "holds_now", *self.readonly_recorded, *self.readonly_provenance]

    def has_change_permission(self, request, obj=None) -> bool:
        # A closed version is history: it can be read, not changed.
        return super().has_change_permission(request, obj) and (obj is None or obj.valid_to is None)

    def has_delete_permission(self, request, obj=None) -> bool:
        return super().has_delete_permission(request, obj) and (obj is None or obj.valid_to is None)

    def save_model(self, request, obj: Fact, form: FactForm, change: bool) -> None:
        cleaned = form.cleaned_data
        if not change:
            created = fact_create(
                agent=cleaned["agent"],
                user=cleaned.get("user"),
                scopes=cleaned["scopes"],
                content=cleaned["content"],
                tags=cleaned["tags"],
                change_reason=f"{cleaned['reason']} ({admin_operator(request)})",
                written_by=FactWriter.OPERATOR,
                world_time=cleaned["world_time"],
            )
            obj.pk, obj.lineage, obj.version = created.pk, created.lineage, created.version
            return
        if not form.has_real_change():
            return
        current = Fact.objects.get(pk=obj.pk)
        # The world time the form showed, as it was or as changed: a correction of the content keeps it. (The
        # operator's edit is fact_supersede, as before: fact_revise's checks are the API caller's, the word limit
        # among them, which an operator's form never had.)
        successor = fact_supersede(
            fact=current,
            content=cleaned["content"],
            reason=f"{cleaned['reason']} ({admin_operator(request)})",
            scopes=cleaned["scopes"],
            user=cleaned.get("user"),
            tags=cleaned["tags"],
            written_by=FactWriter.OPERATOR,
            world_time=cleaned["world_time"],
        )
        request._fact_successor = successor

    def save_related(self, request, form, formsets, change) -> None:
        # The form holds no relations to save; the services wrote the version and its links.
        return

    def response_change(self, request, obj):
        successor = getattr(request, "_fact_successor", None)
        if successor is None:
            self.message_user(request, "Nothing changed: no new version written.", messages.INFO)
            return HttpResponseRedirect(admin_change_url(obj))
        self.message_user(
            request,
            f"Saved as version {successor.version} (fact #{successor.pk}); version {obj.version} is closed and kept.",
            messages.SUCCESS,
        )
        return HttpResponseRedirect(reverse("admin:facts_fact_history", args=[successor.pk]))

    # --- delete closes ----------------------------------------------------------------------------------------------

    def get_deleted_objects(self, objs, request):
        # Nothing is deleted: the fact is closed. (Django would otherwise walk every related row to list them.)
        return [str(obj) for obj in objs], {}, set(), []

    def delete_model(self, request, obj: Fact) -> None:
        fact_close(fact=obj, reason=f"deleted by an operator ({admin_operator(request)})")

    def response_delete(self, request, obj_display, obj_id):
        self.message_user(
            request, f"Fact #{obj_id} is closed: searches no longer return it; its history keeps it.", messages.SUCCESS
        )
        return HttpResponseRedirect(reverse("admin:facts_fact_history", args=[obj_id]))

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # closing is "close selected"; destroying is "erase selected"
        return actions

    # --- history and semantic search pages --------------------------------------------------------------------------

    def get_urls(self):
        return [
            path("search/", self.admin_site.admin_view(self.semantic_search_view), name="facts_fact_search"),
            *super().get_urls(),
        ]

    def history_view(self, request, object_id, extra_context=None):
        fact = get_object_or_404(Fact.objects.defer("search_vector"), pk=object_id)
        if not self.has_view_or_change_permission(request, fact):
            return HttpResponseRedirect(reverse("admin:index"))
        versions = fact_versions(fact=fact)
        log_entries = LogEntry.objects.filter(
            content_type=ContentType.objects.get_for_model(Fact), object_id__in=[str(v.pk) for v in versions]
        ).select_related("user")
        context = {
            **self.admin_site.each_context(request),
            "title": f"History of fact #{fact.pk}",
            "subtitle": None,
            "opts": self.opts,
            "original": fact,
            "versions": versions,
            "log_entries": log_entries.order_by("-action_time")[:50],
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/facts/fact/versions.html", context)

    def semantic_search_view(self, request):
        form = FactSearchForm(request.GET or None)
        hits, error, target = [], "", None
        if form.is_valid():
            agent = form.cleaned_data["agent"]
            try:
                target = memory_scope_resolve(
                    agent=agent,
                    user_external_id=form.cleaned_data["user"] or None,
                    session_external_id=None,
                )
                if form.cleaned_data["user"] and target.user is None:
                    error = f"{agent} has no user {form.cleaned_data['user']!r}: showing agent-wide facts only."
                hits = facts_search(
                    agent=agent,
                    user=target.user,
                    query=form.cleaned_data["query"],
                    top_k=form.cleaned_data["top_k"],
                    mode=form.cleaned_data["mode"],
                    include_history=form.cleaned_data["include_history"],
                    record_access=False,
                )
            except ApplicationError as failure:
                error = failure.message
        context = {
            **self.admin_site.each_context(request),
            "title": "Semantic fact search",
            "subtitle": None,
            "opts": self.opts,
            "form": form,
            "hits": hits,
            "error": error,
            "target": target,
        }
        return TemplateResponse(request, "admin/facts/fact/search.html", context)

    # --- bulk actions -------------------------------------------------------------------------------------------

    @admin.action(description="Re-embed selected facts (queued)")
    def reembed_selected(self, request, queryset) -> None:
        fact_ids = list(queryset.values_list("pk", flat=True))
        facts_reembed_request(fact_ids=fact_ids)
        self.message_user(request, f"Re-embedding of {len(fact_ids)} facts queued.", messages.SUCCESS)

    @admin.action(description="Close selected facts (kept as history)")
    def close_selected(self, request, queryset) -> None:
        closed = facts_close(
            facts=queryset.filter(valid_to__isnull=True).defer("search_vector"),
            reason=f"closed by an operator ({admin_operator(request)})",
        )
        self.message_user(request, f"Closed {closed} facts; already closed versions were left as they were.")

    @admin.action(description="Pin selected facts (retention keeps them)")
    def pin_selected(self, request, queryset) -> None:
        pinned = facts_pin(fact_ids=queryset.values_list("pk", flat=True), pinned=True)
        self.message_user(request, f"Pinned {pinned} current facts.")

    @admin.action(description="Unpin selected facts")
    def unpin_selected(self, request, queryset) -> None:
        unpinned = facts_pin(fact_ids=queryset.values_list("pk", flat=True), pinned=False)
        self.message_user(request, f"Unpinned {unpinned} current facts.")

    @admin.action(description="Change the scope of selected facts…")
    def change_scope_of_selected(self, request, queryset):
        current = queryset.filter(valid_to__isnull=True).select_related("agent", "user").defer("search_vector")
        form = FactScopeChangeForm(request.POST if "apply" in request.POST else None)
        if form.is_valid():
            scopes = form.cleaned_data["scopes"]
            changed, skipped = facts_scope_change(
                facts=current,
                scopes=scopes,
                reason=f"scope changed to {', '.join(scopes)} ({admin_operator(request)})",
                written_by=FactWriter.OPERATOR,
            )
            self.message_user(request, f"{changed} facts have a new version with scopes {', '.join(scopes)}.")
            if skipped:
                self.message_user(
                    request,
                    f"Skipped {', '.join(f'#{pk}' for pk in skipped)}: agent-wide facts have no user to scope them to.",
                    messages.WARNING,
                )
            return None
        return TemplateResponse(
            request,
            "admin/facts/fact/change_scope.html",
            {
                **self.admin_site.each_context(request),
                "title": "Change the scope of facts",
                "subtitle": None,
                "opts": self.opts,
                "form": form,
                "facts": current[:200],
                "fact_count": current.count(),
                "selected_ids": request.POST.getlist(ACTION_CHECKBOX_NAME),
                "select_across": request.POST.get("select_across", "0"),
                "action": "change_scope_of_selected",
            },
        )

    @admin.action(description="Export selected facts (JSON lines)")
    def export_selected(self, request, queryset) -> StreamingHttpResponse:
        response = StreamingHttpResponse(facts_export_lines(facts=queryset), content_type="application/x-ndjson")
        filename = f"facts-{timezone.now():%Y%m%d-%H%M%S}.jsonl"
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response

    @admin.action(description="Erase selected facts and all their versions (permanent)…")
    def erase_selected(self, request, queryset):
        fact_ids = list(queryset.values_list("pk", flat=True))
        if request.POST.get("confirm") == "yes":
            erased = facts_erase(fact_ids=fact_ids)
            self.message_user(request, f"Erased {erased} fact versions for good.", messages.SUCCESS)
            return None
        versions = Fact.objects.filter(lineage__in=queryset.values("lineage")).defer("search_vector")
        return TemplateResponse(
            request,
            "admin/facts/fact/erase_confirmation.html",
            {
                **self.admin_site.each_context(request),
                "title": "Erase facts permanently?",
                "subtitle": None,
                "opts": self.opts,
                "versions": versions.select_related("user").order_by("lineage", "version")[:500],
                "version_count": versions.count(),
                "selected_ids": request.POST.getlist(ACTION_CHECKBOX_NAME),
                "select_across": request.POST.get("select_across", "0"),
                "action": "erase_selected",
            },
        )
