"""Sessions and their messages in the admin."""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.paginator import Paginator
from django.db.models.functions import Left
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import path

from console.utils import (
    FastActionCheckboxMixin,
    TextInputFilter,
    admin_change_url,
    admin_is_changelist,
    admin_link,
    text_shorten,
)
from conversations.models import Message, Session
from conversations.selectors.session_detail import session_messages
from formation.models import FormationJob
from formation.selectors.jobs import session_formation_jobs_recent
from formation.services.formation_holds import session_waiting_detail
from formation.services.formation_triggers import formation_request
from formation.services.ingestion import session_close_and_form

MESSAGES_PER_PAGE = 50
EXCERPT_CHARS = 100


class SessionUserFilter(TextInputFilter):
    title = "user (external id)"
    parameter_name = "user_external_id"
    lookup = "user__external_id"


@admin.register(Session)
class SessionAdmin(FastActionCheckboxMixin, admin.ModelAdmin):
    list_display = [
        "external_id",
        "agent",
        "user",
        "message_count",
        "token_count",
        "formation_status",
        "formed_through_message_id",
        "last_formed_at",
        "last_activity_at",
        "closed_at",
    ]
    list_select_related = ["agent", "user"]
    list_filter = [
        "formation_status",
        "formation_waiting_reason",
        "agent",
        SessionUserFilter,
        ("closed_at", admin.EmptyFieldListFilter),
    ]
    search_fields = ["external_id"]
    date_hierarchy = "last_activity_at"
    show_full_result_count = False
    readonly_fields = [
        "agent_link",
        "user_link",
        "external_id",
        "started_at",
        "last_activity_at",
        "closed_at",
        "message_count",
        "token_count",
        "formation_status",
        "formation_waiting",
        "formed_through_message_id",
        "formation_queued_at",
        "last_formed_at",
        "metadata",
    ]
    fieldsets = [
        (None, {"fields": ["external_id", "agent_link", "user_link", "metadata"]}),
        ("Activity", {"fields": ["started_at", "last_activity_at", "closed_at", "message_count", "token_count"]}),
        (
            "Formation",
            {
                "fields": [
                    "formation_status",
                    "formation_waiting",
                    "formed_through_message_id",
                    "formation_queued_at",
                    "last_formed_at",
                ],
                "description": "Formation works on the messages after the cursor (formed through message) and moves "
                "it only when everything it produced is committed.",
            },
        ),
    ]
    actions = ["form_memories_now", "close_sessions"]
    change_form_template = "admin/conversations/session/change_form.html"

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # a session is a record of what happened; its actions are the buttons

    @admin.display(description="agent")
    def agent_link(self, session: Session) -> str:
        return admin_link(session.agent)

    @admin.display(description="user")
    def user_link(self, session: Session) -> str:
        return admin_link(session.user)

    @admin.display(description="waiting because")
    def formation_waiting(self, session: Session) -> str:
        return session_waiting_detail(session=session) or "-"

    def get_urls(self):
        return [
            path(
                "<int:object_id>/form-memories/",
                self.admin_site.admin_view(self.form_memories_view),
                name="conversations_session_form_memories",
            ),
            path(
                "<int:object_id>/close/",
                self.admin_site.admin_view(self.close_view),
                name="conversations_session_close",
            ),
            *super().get_urls(),
        ]

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            page = Paginator(session_messages(session=obj), MESSAGES_PER_PAGE).get_page(
                request.GET.get("messages_page")
            )
            context["messages_page"] = page
            context["formation_cursor"] = obj.formed_through_message_id or 0
            context["formation_jobs"] = session_formation_jobs_recent(session=obj)
        return super().render_change_form(request, context, add, change, form_url, obj)

    def _request_formation(self, request, session: Session) -> None:
        if formation_request(session=session, trigger=FormationJob.Trigger.EXPLICIT):
            self.message_user(request, f"Formation of {session} queued.", messages.SUCCESS)
        else:
            self.message_user(request, f"Formation of {session} is already queued or running.", messages.INFO)

    def form_memories_view(self, request, object_id: int):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        session = get_object_or_404(Session, pk=object_id)
        self._request_formation(request, session)
        return HttpResponseRedirect(admin_change_url(session))

    def close_view(self, request, object_id: int):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        session = get_object_or_404(Session, pk=object_id)
        _, closed_now = session_close_and_form(session=session)
        if closed_now:
            self.message_user(request, f"Session {session} closed; formation of what it has not formed is queued.")
        else:
            self.message_user(request, f"Session {session} was already closed; nothing changed.")
        return HttpResponseRedirect(admin_change_url(session))

    @admin.action(description="Form memories now (queued)")
    def form_memories_now(self, request, queryset) -> None:
        queued = sum(formation_request(session=session, trigger=FormationJob.Trigger.EXPLICIT) for session in queryset)
        self.message_user(request, f"Formation queued for {queued} sessions; the others were already queued.")

    @admin.action(description="Close selected sessions")
    def close_sessions(self, request, queryset) -> None:
        open_sessions = list(queryset.filter(closed_at__isnull=True))
        for session in open_sessions:
            session_close_and_form(session=session)
        self.message_user(request, f"Closed {len(open_sessions)} sessions; their formation is queued.")


class MessageSessionFilter(TextInputFilter):
    title = "session (external id)"
    parameter_name = "session_external_id"
    lookup = "session__external_id"


@admin.register(Message)
class MessageAdmin(FastActionCheckboxMixin, admin.ModelAdmin):
    """Messages are the record facts are traced back to: read-only here."""

    list_display = ["id", "session", "role", "short_content", "token_count", "created_at"]
    list_select_related = ["session"]
    list_filter = ["role", MessageSessionFilter]
    search_fields = ["content"]
    show_full_result_count = False
    fields = (
        "session_link",
        "role",
        "content",
        "token_count",
        "created_at",
        "stored_at",
        "idempotency_key",
        "metadata",
    )
    readonly_fields = fields

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if not admin_is_changelist(request):
            return queryset
        # The list shows an excerpt: fetch only that much of each message, however long it is.
        return queryset.defer("content", "metadata").annotate(content_excerpt=Left("content", EXCERPT_CHARS + 1))

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="content")
    def short_content(self, message: Message) -> str:
        return text_shorten(getattr(message, "content_excerpt", None) or message.content, EXCERPT_CHARS)

    @admin.display(description="session")
    def session_link(self, message: Message) -> str:
        return admin_link(message.session)
