"""What full-text search knows of each scope's size, and the changes not folded yet."""

from django.contrib import admin

from console.utils import ReadOnlyAdminMixin
from core.models import (
    CorpusStatistics,
    CorpusStatisticsChange,
)


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
