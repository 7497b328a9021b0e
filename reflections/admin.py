from django.contrib import admin

from reflections.models import ConsolidatedMemory, ConsolidatedMemoryVersion, Reflection


@admin.register(Reflection)
class ReflectionAdmin(admin.ModelAdmin):
    list_display = ["id", "content", "scope", "agent", "user", "session", "absorbed", "created_at"]
    list_select_related = ["agent", "user", "session"]
    list_filter = ["scope", "absorbed", "agent"]
    search_fields = ["content"]
    raw_id_fields = ["user", "session", "source_session", "consolidated_into"]


@admin.register(ConsolidatedMemory)
class ConsolidatedMemoryAdmin(admin.ModelAdmin):
    list_display = ["id", "scope", "agent", "user", "session", "version", "word_limit", "last_consolidated_at"]
    list_select_related = ["agent", "user", "session"]
    list_filter = ["scope", "agent"]
    raw_id_fields = ["user", "session"]


@admin.register(ConsolidatedMemoryVersion)
class ConsolidatedMemoryVersionAdmin(admin.ModelAdmin):
    list_display = ["memory", "version", "change_reason", "created_at", "replaced_at"]
    list_select_related = ["memory"]
    raw_id_fields = ["memory"]
