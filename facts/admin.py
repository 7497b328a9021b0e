from django.contrib import admin

from facts.models import Fact


@admin.register(Fact)
class FactAdmin(admin.ModelAdmin):
    list_display = ["id", "content", "scopes", "agent", "user", "version", "formed_at", "valid_to"]
    list_select_related = ["agent", "user"]
    list_filter = ["agent"]
    search_fields = ["content"]
    raw_id_fields = ["user", "source_session", "superseded_by"]
    readonly_fields = ["content_hash", "lineage", "formed_at", "access_count", "last_accessed_at"]
    exclude = ["source_messages", "closed_by_messages"]
    show_full_result_count = False
