"""Relations in the admin, read-only: each is formed with the facts that state it and ended, never edited, when they
are closed; an operator changes them through the facts, or through merging and renaming entities."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.utils.html import format_html, format_html_join

from console.utils import FastActionCheckboxMixin, ReadOnlyAdminMixin, TextInputFilter, admin_change_url, admin_link
from facts.models import Relation


class RelationStatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return [("current", "current"), ("ended", "ended")]

    def queryset(self, request, queryset):
        if self.value() == "current":
            return queryset.filter(valid_to__isnull=True)
        if self.value() == "ended":
            return queryset.filter(valid_to__isnull=False)
        return queryset


class RelationPredicateFilter(TextInputFilter):
    title = "predicate"
    parameter_name = "predicate"
    lookup = "predicate"


class RelationUserFilter(TextInputFilter):
    title = "user (external id)"
    parameter_name = "user"
    lookup = "user__external_id"


@admin.register(Relation)
class RelationAdmin(FastActionCheckboxMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["id", "subject", "predicate", "target", "status", "valid_from", "valid_to", "agent", "user"]
    list_display_links = ["id", "predicate"]
    list_select_related = ["subject", "object_entity", "agent", "user"]
    list_filter = [RelationStatusFilter, RelationPredicateFilter, "agent", RelationUserFilter]
    show_full_result_count = False
    ordering = ["-pk"]
    fields = [
        "agent",
        "user",
        "subject_link",
        "predicate",
        "object_link",
        "formed_at",
        "valid_from",
        "valid_to",
        "closed_reason",
        "source_facts_links",
        "source_messages_links",
    ]
    extra_readonly_fields = ("subject_link", "object_link", "source_facts_links", "source_messages_links")

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="object")
    def target(self, relation: Relation) -> str:
        return relation.object_entity.name if relation.object_entity is not None else f"“{relation.object_value}”"

    @admin.display(description="status")
    def status(self, relation: Relation) -> str:
        return "current" if relation.valid_to is None else "ended"

    @admin.display(description="subject")
    def subject_link(self, relation: Relation) -> str:
        return admin_link(relation.subject)

    @admin.display(description="object")
    def object_link(self, relation: Relation) -> str:
        return admin_link(relation.object_entity) if relation.object_entity_id else f"“{relation.object_value}”"

    @staticmethod
    def _links(rows: QuerySet, text) -> str:
        links = format_html_join(
            "", '<li><a href="{}">#{}</a> {}</li>', ((admin_change_url(row), row.pk, text(row)) for row in rows)
        )
        return format_html("<ul>{}</ul>", links) if links else "-"

    @admin.display(description="stated by facts")
    def source_facts_links(self, relation: Relation) -> str:
        return self._links(relation.source_facts.defer("search_vector").order_by("pk"), lambda fact: fact.content)

    @admin.display(description="from messages")
    def source_messages_links(self, relation: Relation) -> str:
        return self._links(
            relation.source_messages.order_by("pk"), lambda message: f"{message.role}: {message.content[:160]}"
        )
