"""Entities and relations in the admin, read-only: formation writes them (facts.services.graph), and ending a
relation follows its facts. The entity page with its graph, merge and rename build on these."""

from __future__ import annotations

from django.contrib import admin

from facts.models import Entity, Relation


class _ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Entity)
class EntityAdmin(_ReadOnlyAdmin):
    list_display = ["name", "entity_type", "user", "agent", "is_user", "merged_into", "updated_at"]
    list_select_related = ["agent", "user", "merged_into"]
    list_filter = ["entity_type", "agent"]
    search_fields = ["name"]


@admin.register(Relation)
class RelationAdmin(_ReadOnlyAdmin):
    list_display = ["subject", "predicate", "object_entity", "object_value", "valid_from", "valid_to", "closed_reason"]
    list_select_related = ["subject", "object_entity"]
    list_filter = ["agent"]
    search_fields = ["predicate", "subject__name", "object_value"]
