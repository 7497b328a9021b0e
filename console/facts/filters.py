"""List filters of the fact admin."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Q
from django.utils import timezone

from agents.categories import DEFAULT_CATEGORIES
from console.utils import TextInputFilter
from facts.models import FactScope
from facts.world_time import TimePrecision


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


class FactCategoryFilter(admin.SimpleListFilter):
    """The category a fact is filed under (agents.categories): the default set, "not filed" (formed before
    categories), or an agent's own category by its slug in the URL (?category=orders)."""

    title = "category"
    parameter_name = "category"

    def lookups(self, request, model_admin):
        return [*((category.slug, category.name) for category in DEFAULT_CATEGORIES), ("-", "not filed")]

    def queryset(self, request, queryset):
        value = self.value()
        if value is None:
            return queryset
        return queryset.filter(category="" if value == "-" else value)


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


class FactWorldTimeFilter(admin.SimpleListFilter):
    """Whether the statement holds in the world today (facts.world_time.WorldTime.holds_on), apart from whether the
    version is current memory (the status filter): an ended statement stays current memory."""

    title = "in the world"
    parameter_name = "world"

    def lookups(self, request, model_admin):
        return [
            ("holds_now", "holds now"),
            ("ended", "ended in the world"),
            ("unknown", "no time known"),
        ]

    def queryset(self, request, queryset):
        today = timezone.now().date()
        ended = Q(held_until_precision=TimePrecision.UNKNOWN) | Q(held_until__lte=today)
        if self.value() == "holds_now":
            return queryset.filter(Q(held_from__isnull=True) | Q(held_from__lte=today)).exclude(ended)
        if self.value() == "ended":
            return queryset.filter(ended)
        if self.value() == "unknown":
            return queryset.filter(held_from__isnull=True, held_until_precision="")
        return queryset
