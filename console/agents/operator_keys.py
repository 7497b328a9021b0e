"""Operator keys in the admin: created through the service (the raw key shown once), revoked, never edited."""

from __future__ import annotations

from django.contrib import admin, messages

from agents.models import OperatorKey
from agents.services.operator_keys import operator_key_create, operator_key_revoke


@admin.register(OperatorKey)
class OperatorKeyAdmin(admin.ModelAdmin):
    """The administration API's keys: created here or by `manage.py operator_key create`, the raw key shown once in a
    message, then only revoked."""

    list_display = ["prefix", "name", "created_by", "created_at", "last_used_at", "revoked_at"]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["prefix", "name"]
    readonly_fields = ["prefix", "created_by", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke_keys"]

    def get_fields(self, request, obj=None):
        return ["name"] if obj is None else ["name", *self.readonly_fields]

    def get_readonly_fields(self, request, obj=None):
        return self.readonly_fields if obj is None else ["name", *self.readonly_fields]

    def save_model(self, request, obj: OperatorKey, form, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        created, raw_key = operator_key_create(name=obj.name, created_by=f"admin:{request.user.get_username()}")
        obj.pk, obj.prefix, obj.key_digest, obj.created_at = (
            created.pk,
            created.prefix,
            created.key_digest,
            created.created_at,
        )
        messages.warning(request, f"Copy the new operator key now; it will not be shown again: {raw_key}")

    @admin.action(description="Revoke the selected keys")
    def revoke_keys(self, request, queryset) -> None:
        for operator_key in queryset.filter(revoked_at__isnull=True):
            operator_key_revoke(operator_key=operator_key)
        messages.success(request, "Revoked.")
