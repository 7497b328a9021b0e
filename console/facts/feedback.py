"""Feedback on facts: what agents and their users said about remembered facts, with what it did. Feedback that waits
for review (negative feedback on agent-wide or curated memory, and anything harmful) is decided here: close the fact
(kept as history) or dismiss the feedback, through facts.services.feedback."""

from __future__ import annotations

from django.contrib import admin, messages

from console.utils import admin_link, admin_operator, text_shorten
from core.exceptions import ApplicationError
from facts.models import FactFeedback
from facts.services.feedback import fact_feedback_accept, fact_feedback_dismiss


def _decide_each(modeladmin, request, queryset, decide, done: str) -> None:
    decided, refused = 0, []
    for feedback in queryset:
        try:
            decide(feedback=feedback, decided_by=admin_operator(request))
            decided += 1
        except ApplicationError as error:
            refused.append(f"#{feedback.pk}: {error.message}")
    if decided:
        modeladmin.message_user(request, f"{decided} feedback {done}.")
    if refused:
        modeladmin.message_user(request, "Not changed: " + "; ".join(refused), level=messages.WARNING)


@admin.action(description="Accept: close the fact (kept as history)")
def accept(modeladmin, request, queryset) -> None:
    _decide_each(modeladmin, request, queryset, fact_feedback_accept, "accepted, facts closed")


@admin.action(description="Dismiss: keep the fact as it is")
def dismiss(modeladmin, request, queryset) -> None:
    _decide_each(modeladmin, request, queryset, fact_feedback_dismiss, "dismissed")


@admin.register(FactFeedback)
class FactFeedbackAdmin(admin.ModelAdmin):
    list_display = ["rating", "fact_shown", "note_excerpt", "outcome", "agent", "given_by", "given_via", "created_at"]
    list_filter = ["outcome", "rating", "given_via", "agent"]
    list_select_related = ["agent", "user", "fact"]
    search_fields = ["note", "fact__content"]
    ordering = ["-created_at"]
    actions = [accept, dismiss]
    readonly_fields = [
        "agent",
        "fact_link",
        "lineage",
        "given_by",
        "rating",
        "note",
        "given_via",
        "outcome",
        "created_at",
        "decided_at",
        "decided_by",
    ]
    exclude = ["fact", "user"]

    def has_add_permission(self, request) -> bool:
        return False  # feedback comes from the API and the rate_memory tool

    def has_change_permission(self, request, obj=None) -> bool:
        return obj is None  # the list's actions decide; the record itself is read-only

    @admin.display(description="fact", ordering="fact__content")
    def fact_shown(self, feedback: FactFeedback) -> str:
        return f"#{feedback.fact_id} {text_shorten(feedback.fact.content, 80)}"

    @admin.display(description="fact")
    def fact_link(self, feedback: FactFeedback) -> str:
        return admin_link(feedback.fact, f"#{feedback.fact_id} {text_shorten(feedback.fact.content, 120)}")

    @admin.display(description="given by")
    def given_by(self, feedback: FactFeedback) -> str:
        return f"user {feedback.user.external_id}" if feedback.user is not None else "the agent"

    @admin.display(description="note")
    def note_excerpt(self, feedback: FactFeedback) -> str:
        return text_shorten(feedback.note, 80)
