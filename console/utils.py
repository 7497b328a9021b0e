"""Pieces the console's pages share: a free-text list filter (for columns with too many values to list, such as users
on a 100k-row table) and links to other objects' admin pages."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.db.models import Model, QuerySet
from django.http import QueryDict
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from core.models import LLMCall
from formation.models import FormationJob
from reflections.models import ConsolidationJob


def admin_change_url(obj: Model) -> str:
    return reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[obj.pk])


def admin_changelist_url(model: type[Model], **filters) -> str:
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    if not filters:
        return url
    query = QueryDict(mutable=True)
    query.update({name: str(value) for name, value in filters.items()})
    return f"{url}?{query.urlencode()}"


def admin_link(obj: Model | None, text: str | None = None) -> str:
    if obj is None:
        return "-"
    return format_html('<a href="{}">{}</a>', admin_change_url(obj), text if text is not None else str(obj))


def admin_is_changelist(request) -> bool:
    return bool(request.resolver_match and request.resolver_match.url_name.endswith("_changelist"))


def admin_operator(request) -> str:
    """How an operator's changes name who made them."""
    return f"admin:{request.user.get_username()}"


def text_shorten(text: str, length: int = 100) -> str:
    return text if len(text) <= length else text[: length - 1].rstrip() + "…"


class TextInputFilter(admin.SimpleListFilter):
    """A list filter with a text box instead of a list of values. Subclasses set title, parameter_name and
    `lookup`, the queryset filter the typed value goes to."""

    template = "admin/text_input_filter.html"
    lookup: str = ""

    def lookups(self, request, model_admin):
        return ()

    def has_output(self) -> bool:
        return True

    def queryset(self, request, queryset: QuerySet) -> QuerySet:
        value = (self.value() or "").strip()
        return queryset.filter(**{self.lookup: self.lookup_value(value)}) if value else queryset

    def lookup_value(self, value: str):
        return value

    def choices(self, changelist):
        # The other filters of the page ride along as hidden fields, so typing here narrows what is shown.
        others = QueryDict(changelist.get_query_string(remove=[self.parameter_name, "p"]).lstrip("?"))
        yield {
            "parameter_name": self.parameter_name,
            "value": self.value() or "",
            "hidden": [(name, value) for name in others for value in others.getlist(name)],
            "clear_url": changelist.get_query_string(remove=[self.parameter_name]),
        }


class FastActionCheckboxMixin:
    """Renders each row's action checkbox as a plain string instead of through a form widget template: the same
    markup Django renders, at a fraction of the cost, which matters on 100-row pages of the largest tables."""

    @admin.display(description=mark_safe('<input type="checkbox" id="action-toggle">'))
    def action_checkbox(self, obj: Model) -> SafeString:
        return format_html(
            '<input type="checkbox" name="{}" value="{}" class="action-select" aria-label="{}">',
            ACTION_CHECKBOX_NAME,
            obj.pk,
            format_html("Select this object for an action - {}", obj),
        )


class ReadOnlyAdminMixin:
    """Rows written by the system (jobs, runs, records): shown, never added or edited in the admin."""

    model: type[Model]  # the ModelAdmin's

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in self.model._meta.fields] + list(self.extra_readonly_fields)

    extra_readonly_fields: tuple[str, ...] = ()

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class JobAdminMixin(ReadOnlyAdminMixin):
    """Duration, error excerpt and the job's LLM calls, for formation and consolidation jobs (`job_kind`)."""

    job_kind: str
    extra_readonly_fields = ("duration", "llm_calls_link")

    @admin.display(description="duration")
    def duration(self, job) -> str:
        seconds = job.duration_seconds
        return "-" if seconds is None else f"{seconds:.1f} s"

    @admin.display(description="error")
    def short_error(self, job) -> str:
        # Lists annotate an excerpt and defer the full error, which would cost a query per row.
        error = job.error_excerpt if hasattr(job, "error_excerpt") else job.error
        return text_shorten(error, 80) if error else ""

    @admin.display(description="LLM calls")
    def llm_calls_link(self, job) -> str:
        url = admin_changelist_url(LLMCall, job_kind=self.job_kind, job_id=job.pk)
        return format_html('<a href="{}">LLM calls of this job</a>', url)


# Job kind (LLMCall.job_kind, SensitiveDataFinding.job_kind) -> the model of its jobs.
JOB_MODELS: dict[str, type[Model]] = {"formation": FormationJob, "consolidation": ConsolidationJob}


def admin_job_link(job_kind: str, job_id: int | None) -> str:
    """A link to a formation or consolidation job in the admin."""
    if not job_id:
        return "-"
    model = JOB_MODELS.get(job_kind)
    if model is None:
        return f"{job_kind} #{job_id}"
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_change", args=[job_id])
    return format_html('<a href="{}">{} #{}</a>', url, job_kind, job_id)
