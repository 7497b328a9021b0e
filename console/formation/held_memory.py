"""The review queue: memory formation held back (agent-wide memory drawn from a user's words, instructions to the
model rejected by rule), with the user who said it and the messages it came from. Operators approve it agent-wide,
keep it for its user, or reject it; each decision goes through formation.services.memory_review."""

from __future__ import annotations

from django.contrib import admin, messages
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from console.utils import admin_link, admin_operator, text_shorten
from core.exceptions import ApplicationError
from formation.models import HeldMemory
from formation.services.memory_review import held_memory_approve, held_memory_keep_for_user, held_memory_reject


def _decide_each(modeladmin, request, queryset, decide, done: str) -> None:
    decided, refused = 0, []
    for held in queryset.select_related("agent", "user", "session"):
        try:
            decide(held=held, decided_by=admin_operator(request))
            decided += 1
        except ApplicationError as error:
            refused.append(f"#{held.pk}: {error.message}")
    if decided:
        modeladmin.message_user(request, f"{decided} held memories {done}.")
    if refused:
        modeladmin.message_user(request, "Not changed: " + "; ".join(refused), level=messages.WARNING)


@admin.action(description="Approve agent-wide (every user of the agent sees it)")
def approve(modeladmin, request, queryset) -> None:
    _decide_each(modeladmin, request, queryset, held_memory_approve, "approved agent-wide")


@admin.action(description="Keep for the user who said it only")
def keep_for_user(modeladmin, request, queryset) -> None:
    _decide_each(modeladmin, request, queryset, held_memory_keep_for_user, "kept for their users")


@admin.action(description="Reject")
def reject(modeladmin, request, queryset) -> None:
    _decide_each(modeladmin, request, queryset, held_memory_reject, "rejected")


@admin.register(HeldMemory)
class HeldMemoryAdmin(admin.ModelAdmin):
    list_display = ["content_excerpt", "kind", "reason", "status", "agent", "said_by", "origin", "created_at"]
    list_filter = ["status", "reason", "kind", "origin", "agent"]
    search_fields = ["content", "user__external_id", "agent__external_id"]
    list_select_related = ["agent", "user"]
    ordering = ["-created_at"]
    actions = [approve, keep_for_user, reject]
    readonly_fields = [
        "agent",
        "said_by",
        "session_link",
        "kind",
        "content",
        "reason",
        "detail",
        "origin",
        "source_messages_shown",
        "relations_stated",
        "status",
        "created_at",
        "decided_at",
        "decided_by",
        "stored_link",
    ]
    exclude = ["user", "session", "source_messages", "stored_id", "relations"]

    def has_add_permission(self, request) -> bool:
        return False  # held memory comes from formation and the memory tools only

    def has_change_permission(self, request, obj=None) -> bool:
        return obj is None  # the list's actions decide; the record itself is read-only

    @admin.display(description="content", ordering="content")
    def content_excerpt(self, held: HeldMemory) -> str:
        return text_shorten(held.content, 120)

    @admin.display(description="said by", ordering="user__external_id")
    def said_by(self, held: HeldMemory) -> str:
        return admin_link(held.user, held.user.external_id) if held.user else "-"

    @admin.display(description="session")
    def session_link(self, held: HeldMemory) -> str:
        return admin_link(held.session, held.session.external_id) if held.session else "-"

    @admin.display(description="source messages")
    def source_messages_shown(self, held: HeldMemory) -> str:
        rows = held.source_messages.order_by("id")
        if not rows:
            return "-"
        return format_html(
            "<ol>{}</ol>",
            format_html_join("", "<li><b>{}</b>: {}</li>", ((m.role, text_shorten(m.content, 500)) for m in rows)),
        )

    @admin.display(description="relations stated (written when approved)")
    def relations_stated(self, held: HeldMemory) -> str:
        if not held.relations:
            return "-"
        return format_html(
            "<ul>{}</ul>",
            format_html_join(
                "",
                "<li>{} <b>{}</b> {}</li>",
                (
                    (item["subject"]["name"], item["predicate"], (item["object"] or {}).get("name") or item["value"])
                    for item in held.relations
                ),
            ),
        )

    @admin.display(description="stored as")
    def stored_link(self, held: HeldMemory) -> str:
        if held.stored_id is None:
            return "-"
        view = "admin:facts_fact_change" if held.kind == HeldMemory.Kind.FACT else "admin:reflections_reflection_change"
        return format_html('<a href="{}">{} #{}</a>', reverse(view, args=[held.stored_id]), held.kind, held.stored_id)
