"""Facts in the admin. Every write goes through facts.services: an edit supersedes the fact (a new version,
re-embedded), a delete closes it, and only the explicit erase action destroys rows."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.contrib.postgres.search import SearchQuery
from django.db.models import Q, QuerySet
from django.http import HttpResponse, HttpResponseRedirect, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from conversations.models import Agent
from conversations.selectors.memory_scope import memory_scope_resolve
from core.admin_utils import (
    FastActionCheckboxMixin,
    TextInputFilter,
    admin_change_url,
    admin_link,
    admin_operator,
    text_shorten,
)
from core.exceptions import ApplicationError
from facts.models import TEXT_SEARCH_CONFIG, Fact, FactScope, FactWriter, ReferenceChunk, ReferenceDocument
from facts.reference_documents import reference_document_create
from facts.selectors import SearchMode, facts_search
from facts.selectors.export import facts_export_lines
from facts.selectors.versions import fact_versions
from facts.services import (
    fact_close,
    fact_content_hash,
    fact_content_normalize,
    fact_create,
    fact_scopes_validate,
    fact_supersede,
    facts_erase,
    facts_pin,
    facts_reembed_request,
)


class FactStatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return [
            ("current", "current"),
            ("superseded", "superseded by a newer version"),
            ("deleted", "closed without successor"),
        ]

    def queryset(self, request, queryset):
        if self.value() == "current":
            return queryset.filter(valid_to__isnull=True)
        if self.value() == "superseded":
            return queryset.filter(valid_to__isnull=False, superseded_by__isnull=False)
        if self.value() == "deleted":
            return queryset.filter(valid_to__isnull=False, superseded_by__isnull=True)
        return queryset


class FactScopeFilter(admin.SimpleListFilter):
    title = "scope"
    parameter_name = "scope"

    def lookups(self, request, model_admin):
        return [
            ("agent", "agent-wide (every conversation)"),
            ("user", "user only"),
            ("both", "user and agent"),
        ]

    def queryset(self, request, queryset):
        if self.value() == "agent":
            return queryset.filter(scopes__contains=[FactScope.AGENT])
        if self.value() == "user":
            return queryset.filter(scopes__contains=[FactScope.USER]).exclude(scopes__contains=[FactScope.AGENT])
        if self.value() == "both":
            return queryset.filter(scopes__contains=[FactScope.USER, FactScope.AGENT])
        return queryset


class FactUserFilter(TextInputFilter):
    title = "user (external id)"
    parameter_name = "user"
    lookup = "user__external_id"


class FactTagFilter(TextInputFilter):
    title = "tag"
    parameter_name = "tag"
    lookup = "tags__contains"

    def lookup_value(self, value: str):
        return [value]


class FactSourceSessionFilter(TextInputFilter):
    title = "source session (external id)"
    parameter_name = "source_session"
    lookup = "source_session__external_id"


def _tags_parse(text: str) -> list[str]:
    return [tag.strip() for tag in text.split(",") if tag.strip()]


class FactForm(forms.ModelForm):
    """The fields an operator may change. Saving writes a new version through fact_supersede (or fact_create when
    adding); the model's own constraints (one current fact per content and scope) are checked here first."""

    scopes = forms.MultipleChoiceField(
        choices=FactScope.choices,
        widget=forms.CheckboxSelectMultiple,
        help_text="agent: visible in every conversation of the agent; user: only with the user.",
    )
    tags = forms.CharField(required=False, help_text="Comma-separated.")
    reason = forms.CharField(
        max_length=300,
        initial="corrected by an operator",
        help_text="Recorded as why the old version was closed and the new one written.",
    )

    class Meta:
        model = Fact
        fields = ["agent", "user", "scopes", "content", "tags"]
        widgets = {"content": forms.Textarea(attrs={"rows": 3, "cols": 80})}

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.initial["tags"] = ", ".join(self.instance.tags)

    def clean_tags(self) -> list[str]:
        return _tags_parse(self.cleaned_data.get("tags") or "")

    def clean(self) -> dict:
        cleaned = super().clean()
        scopes, user = cleaned.get("scopes") or [], cleaned.get("user")
        agent = cleaned.get("agent") or (self.instance.agent if self.instance.pk else None)
        try:
            fact_scopes_validate(scopes=scopes, user=user)
        except ApplicationError as error:
            raise forms.ValidationError(error.message) from error
        if user is not None and agent is not None and user.agent_id != agent.pk:
            self.add_error("user", "This user belongs to another agent.")
        # The user column is set exactly when the fact is user-scoped (a check constraint); the services decide it.
        if FactScope.USER not in scopes:
            cleaned["user"] = None
        content = fact_content_normalize(cleaned.get("content") or "")
        cleaned["content"] = content
        if agent is not None and content:
            duplicate = (
                Fact.objects.filter(
                    agent=agent,
                    user=cleaned.get("user"),
                    content_hash=fact_content_hash(content),
                    valid_to__isnull=True,
                )
                .exclude(lineage=self.instance.lineage if self.instance.pk else None)
                .first()
            )
            if duplicate is not None:
                self.add_error("content", f"Fact #{duplicate.pk} already says this in the same scope.")
        return cleaned

    def has_real_change(self) -> bool:
        return bool({"user", "scopes", "content", "tags"} & set(self.changed_data))


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
        "formed_at",
        "access_count",
    ]
    list_display_links = ["id", "short_content"]
    list_select_related = ["agent", "user"]
    list_filter = [
        FactStatusFilter,
        FactScopeFilter,
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
    readonly_provenance = [
        "key",
        "pinned",
        "lineage",
        "version",
        "status",
        "formed_at",
        "valid_from",
        "valid_to",
        "change_reason",
        "closed_reason",
        "superseded_by_link",
        "source_session_link",
        "source_messages_links",
        "closed_by_messages_links",
        "access_count",
        "last_accessed_at",
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

    @admin.display(description="source messages")
    def source_messages_links(self, fact: Fact) -> str:
        return self._messages_links(fact.source_messages.order_by("id"))

    @admin.display(description="closed by messages")
    def closed_by_messages_links(self, fact: Fact) -> str:
        return self._messages_links(fact.closed_by_messages.order_by("id"))

    # --- the change form: an edit writes a new version ------------------------------------------------------------

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["agent", "user", "scopes", "content", "tags", "reason"]
        if not self.has_change_permission(request, obj):
            return ["agent", "user", "scopes", "content", "tags", *self.readonly_provenance]
        return ["agent", "user", "scopes", "content", "tags", "reason", *self.readonly_provenance]

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return []
        return ["agent", *self.readonly_provenance]

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
            )
            obj.pk, obj.lineage, obj.version = created.pk, created.lineage, created.version
            return
        if not form.has_real_change():
            return
        current = Fact.objects.get(pk=obj.pk)
        successor = fact_supersede(
            fact=current,
            content=cleaned["content"],
            reason=f"{cleaned['reason']} ({admin_operator(request)})",
            scopes=cleaned["scopes"],
            user=cleaned.get("user"),
            tags=cleaned["tags"],
            written_by=FactWriter.OPERATOR,
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
        closed = 0
        for fact in queryset.filter(valid_to__isnull=True).defer("search_vector"):
            fact_close(fact=fact, reason=f"closed by an operator ({admin_operator(request)})")
            closed += 1
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
            changed, skipped = 0, []
            scopes = form.cleaned_data["scopes"]
            for fact in current:
                if FactScope.USER in scopes and fact.user is None:
                    skipped.append(f"#{fact.pk}")
                    continue
                if sorted(fact.scopes) == sorted(scopes):
                    continue
                fact_supersede(
                    fact=fact,
                    content=fact.content,
                    reason=f"scope changed to {', '.join(scopes)} ({admin_operator(request)})",
                    scopes=scopes,
                    written_by=FactWriter.OPERATOR,
                )
                changed += 1
            self.message_user(request, f"{changed} facts have a new version with scopes {', '.join(scopes)}.")
            if skipped:
                self.message_user(
                    request,
                    f"Skipped {', '.join(skipped)}: agent-wide facts have no user to scope them to.",
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
                "selected_ids": request.POST.getlist(admin.helpers.ACTION_CHECKBOX_NAME),
                "select_across": request.POST.get("select_across", "0"),
                "action": "change_scope_of_selected",
            },
        )

    @admin.action(description="Export selected facts (JSON lines)")
    def export_selected(self, request, queryset) -> HttpResponse:
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
                "selected_ids": request.POST.getlist(admin.helpers.ACTION_CHECKBOX_NAME),
                "select_across": request.POST.get("select_across", "0"),
                "action": "erase_selected",
            },
        )


class FactScopeChangeForm(forms.Form):
    scopes = forms.MultipleChoiceField(choices=FactScope.choices, widget=forms.CheckboxSelectMultiple)


class FactSearchForm(forms.Form):
    agent = forms.ModelChoiceField(queryset=Agent.objects.order_by("external_id"))
    user = forms.CharField(
        required=False,
        label="user (external id)",
        help_text="Empty: only the facts visible in every conversation of the agent.",
    )
    query = forms.CharField(
        label="question", widget=forms.TextInput(attrs={"size": 80, "placeholder": "Where does the user live?"})
    )
    mode = forms.ChoiceField(choices=SearchMode.choices, initial=SearchMode.HYBRID)
    top_k = forms.IntegerField(min_value=1, max_value=100, initial=10, label="results")
    include_history = forms.BooleanField(required=False, help_text="Also closed versions.")


class ReferenceChunkInline(admin.TabularInline):
    model = ReferenceChunk
    fields = ["index", "content"]
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
    fields = ["document", "index", "content"]
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
