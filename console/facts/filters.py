"""List filters of the fact admin."""

from __future__ import annotations

from django.contrib import admin

from console.utils import TextInputFilter
from facts.models import FactScope


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
