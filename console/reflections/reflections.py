"""The reflection buffer in the admin: operators add reflections through the service, remove them, and queue
consolidation of their scopes."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages

from console.utils import (
    FastActionCheckboxMixin,
    admin_link,
    text_shorten,
)
from reflections.models import (
    MemoryScope,
    Reflection,
)
from reflections.services.consolidation import ScopeKey
from reflections.services.curation import scope_consolidation_request
from reflections.services.reflections import reflection_create


class ReflectionAddForm(forms.ModelForm):
    class Meta:
        model = Reflection
        fields = ["agent", "scope", "user", "session", "content"]
        help_texts = {"scope": "agent: no user or session; user: a user; session: the session and its user."}

    def clean(self) -> dict:
        super().clean()
        cleaned = self.cleaned_data
        agent, user, session = cleaned.get("agent"), cleaned.get("user"), cleaned.get("session")
        if user is not None and agent is not None and user.agent_id != agent.pk:
            self.add_error("user", "This user belongs to another agent.")
        if session is not None and user is not None and session.user_id != user.pk:
            self.add_error("session", "This session belongs to another user.")
        return cleaned


@admin.register(Reflection)
class ReflectionAdmin(FastActionCheckboxMixin, admin.ModelAdmin):
    """The buffer: unabsorbed reflections first. An operator may add a note (reflection_create, source manual) or
    delete one; the context cache follows through reflections.signals."""

    list_display = ["id", "short_content", "scope", "agent", "user", "session", "source", "absorbed", "created_at"]
    list_display_links = ["id", "short_content"]
    list_select_related = ["agent", "user", "session"]
    list_filter = ["absorbed", "scope", "source", "agent"]
    search_fields = ["content"]
    ordering = ["absorbed", "-created_at"]
    show_full_result_count = False
    autocomplete_fields = ["agent"]
    raw_id_fields = ["user", "session"]
    readonly_fields = [
        "source",
        "source_session",
        "created_at",
        "absorbed",
        "absorbed_at",
        "consolidated_into_link",
        "consolidated_into_version",
    ]
    actions = ["consolidate_scopes_now"]

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = ReflectionAddForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request, obj=None):
        if obj is None:
            return ReflectionAddForm.Meta.fields
        return ["agent", "scope", "user", "session", "content", *self.readonly_fields]

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # a reflection is an observation; remove it or add a better one

    @admin.display(description="content")
    def short_content(self, reflection: Reflection) -> str:
        return text_shorten(reflection.content, 120)

    @admin.display(description="consolidated into")
    def consolidated_into_link(self, reflection: Reflection) -> str:
        return admin_link(reflection.consolidated_into)

    def save_model(self, request, obj: Reflection, form, change: bool) -> None:
        created = reflection_create(
            agent=obj.agent,
            scope=obj.scope,
            content=obj.content,
            user=obj.user,
            session=obj.session,
            source=Reflection.Source.MANUAL,
        )
        obj.pk = created.pk

    def save_related(self, request, form, formsets, change) -> None:
        return

    def get_changeform_initial_data(self, request):
        return {**super().get_changeform_initial_data(request), "scope": MemoryScope.USER}

    @admin.action(description="Consolidate the scopes of the selected reflections now (queued)")
    def consolidate_scopes_now(self, request, queryset) -> None:
        keys = {ScopeKey.of(reflection) for reflection in queryset.filter(absorbed=False)}
        for key in keys:
            scope_consolidation_request(key=key)
        self.message_user(request, f"Consolidation queued for {len(keys)} scopes.", messages.SUCCESS)
