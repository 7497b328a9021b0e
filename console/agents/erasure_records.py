"""The audit records of erasures (no content, a hash of the user's id)."""

from django.contrib import admin

from agents.models import ErasureRecord


@admin.register(ErasureRecord)
class ErasureRecordAdmin(admin.ModelAdmin):
    """An audit trail: read-only, and never deleted from the admin."""

    list_display = ["agent_external_id", "user_external_id_hash", "requested_by", "erased_at"]
    list_filter = ["agent_external_id"]
    search_fields = ["user_external_id_hash", "agent_external_id"]
    readonly_fields = [
        "agent",
        "agent_external_id",
        "user_external_id_hash",
        "deleted_counts",
        "requested_by",
        "erased_at",
    ]

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
