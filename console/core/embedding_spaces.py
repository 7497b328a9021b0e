"""Embedding spaces in the admin: read-only, changed by the reembed command."""

from django.contrib import admin

from core.models import EmbeddingSpace


@admin.register(EmbeddingSpace)
class EmbeddingSpaceAdmin(admin.ModelAdmin):
    list_display = ["name", "provider", "model", "dimensions", "status", "created_at", "activated_at"]
    list_filter = ["status", "provider"]
    readonly_fields = ["name", "provider", "model", "dimensions", "status", "created_at", "activated_at"]
