from django.contrib import admin

from conversations.models import Agent, AgentAPIKey, EndUser, Message, Session


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ["external_id", "name", "rag_enabled", "always_in_context_enabled", "created_at"]
    list_filter = ["rag_enabled", "always_in_context_enabled"]
    search_fields = ["external_id", "name"]


@admin.register(AgentAPIKey)
class AgentAPIKeyAdmin(admin.ModelAdmin):
    list_display = ["prefix", "name", "agent", "created_at", "last_used_at", "revoked_at"]
    list_select_related = ["agent"]
    list_filter = ["agent"]
    readonly_fields = ["prefix", "key_digest", "created_at", "last_used_at"]


@admin.register(EndUser)
class EndUserAdmin(admin.ModelAdmin):
    list_display = ["external_id", "agent", "created_at"]
    list_select_related = ["agent"]
    list_filter = ["agent"]
    search_fields = ["external_id"]


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin):
    list_display = [
        "external_id",
        "agent",
        "user",
        "message_count",
        "token_count",
        "formation_status",
        "last_activity_at",
    ]
    list_select_related = ["agent", "user"]
    list_filter = ["formation_status", "agent"]
    search_fields = ["external_id", "user__external_id"]
    date_hierarchy = "last_activity_at"
    raw_id_fields = ["user"]


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["id", "session", "role", "short_content", "token_count", "created_at"]
    list_select_related = ["session"]
    list_filter = ["role"]
    search_fields = ["content"]
    raw_id_fields = ["session"]
    show_full_result_count = False

    @admin.display(description="content")
    def short_content(self, message: Message) -> str:
        return message.content[:100]
