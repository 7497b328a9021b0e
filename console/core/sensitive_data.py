"""What the sensitive-data rules kept out of memory, never the secret itself."""

from django.contrib import admin

from console.utils import FastActionCheckboxMixin, admin_job_link
from core.models import SensitiveDataFinding


@admin.register(SensitiveDataFinding)
class SensitiveDataFindingAdmin(FastActionCheckboxMixin, admin.ModelAdmin):
    """Read-only: what the sensitive-data rules kept out of memory, never the secret itself. The agent's page sums
    them (those of failed jobs excluded: those stored nothing)."""

    list_display = ["created_at", "agent", "kind", "action", "target", "job"]
    list_select_related = ["agent"]
    list_filter = ["kind", "action", "target", "agent", ("created_at", admin.DateFieldListFilter)]
    show_full_result_count = False

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in SensitiveDataFinding._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="job")
    def job(self, finding: SensitiveDataFinding) -> str:
        return admin_job_link(finding.job_kind, finding.job_id)
