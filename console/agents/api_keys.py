"""API keys in the admin: created through the service (the raw key shown once), revoked, never edited."""

from __future__ import annotations

from django.contrib import admin, messages

from agents.models import AgentAPIKey
from agents.services.api_keys import api_key_create, api_key_revoke


@admin.register(AgentAPIKey)
class AgentAPIKeyAdmin(admin.ModelAdmin):
    """Keys are created through the service (the raw key is shown once, in a message) and revoked, never edited."""

    list_display = ["prefix", "name", "agent", "created_at", "last_used_at", "revoked_at"]
    list_select_related = ["agent"]
    list_filter = ["agent", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["prefix", "name", "agent__external_id"]
    readonly_fields = ["prefix", "created_at", "last_used_at", "revoked_at"]
    autocomplete_fields = ["agent"]
    actions = ["revoke_keys"]

    def get_fields(self, request, obj=None):
        return ["agent", "name"] if obj is None else ["agent", "name", *self.readonly_fields]

    def get_readonly_fields(self, request, obj=None):
        return self.readonly_fields if obj is None else ["agent", *self.readonly_fields]

    def save_model(self, request, obj: AgentAPIKey, form, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        created, raw_key = api_key_create(agent=obj.agent, name=obj.name)
        obj.pk, obj.prefix, obj.key_digest, obj.created_at = (
            created.pk,
            created.prefix,
            created.key_digest,
            created.created_at,
        )
        messages.warning(request, f"Copy the new API key now; it will not be shown again: {raw_key}")

    @admin.action(description="Revoke the selected keys")
    def revoke_keys(self, request, queryset) -> None:
        for api_key in queryset.filter(revoked_at__isnull=True):
            api_key_revoke(api_key=api_key)
        messages.success(request, "Revoked.")
