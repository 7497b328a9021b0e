"""The webhook pages: endpoints (created and changed through the service, which checks the URL, the event types and
the secret), events (read-only, with their deliveries) and deliveries (the log; redeliver)."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages

from console.utils import admin_link, text_shorten
from core.exceptions import ApplicationError
from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent, WebhookEventType
from webhooks.services.delivery import webhook_deliveries_redeliver
from webhooks.services.endpoints import webhook_endpoint_create, webhook_endpoint_update


class WebhookEndpointForm(forms.ModelForm):
    """The service's checks, shown on the form's fields; a secret left empty is generated."""

    event_types = forms.MultipleChoiceField(
        choices=WebhookEventType.choices, widget=forms.CheckboxSelectMultiple, initial=WebhookEventType.values
    )
    secret = forms.CharField(required=False, help_text="Empty: a new one is generated (whsec_ and base64).")
    url = forms.CharField(max_length=2000, help_text="https:// on a public host (the service checks it).")

    class Meta:
        model = WebhookEndpoint
        fields = ["agent", "url", "description", "event_types", "secret", "is_active"]

    def _post_clean(self) -> None:
        """The service validates and writes; the model's own validation (URLField) would refuse http://localhost."""
        data = self.cleaned_data
        if self.errors:
            return
        try:
            if self.instance.pk is None:
                self.instance = webhook_endpoint_create(
                    agent=data["agent"],
                    url=data["url"],
                    event_types=data["event_types"],
                    description=data.get("description", ""),
                    secret=data.get("secret") or None,
                    is_active=data.get("is_active", True),
                )
            else:
                webhook_endpoint_update(
                    endpoint=self.instance,
                    url=data["url"],
                    event_types=data["event_types"],
                    description=data.get("description", ""),
                    secret=data.get("secret") or None,
                    is_active=data.get("is_active", True),
                )
        except ApplicationError as error:
            for field, problems in (error.fields or {"__all__": [error.message]}).items():
                self.add_error(field if field in self.fields else None, " ".join(problems))

    def save(self, commit: bool = True) -> WebhookEndpoint:
        return self.instance  # written by _post_clean, through the service


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    form = WebhookEndpointForm
    list_display = ["url", "agent", "event_types_shown", "is_active", "created_at"]
    list_filter = ["is_active", "agent"]
    list_select_related = ["agent"]
    search_fields = ["url", "agent__external_id"]
    autocomplete_fields = ["agent"]

    @admin.display(description="events")
    def event_types_shown(self, endpoint: WebhookEndpoint) -> str:
        return ", ".join(endpoint.event_types)

    def save_model(self, request, obj, form, change) -> None:
        pass  # the form wrote it through the service

    def save_related(self, request, form, formsets, change) -> None:
        pass  # nothing else to save: the endpoint has no relations the form edits


@admin.action(description="Redeliver now (a fresh retry schedule)")
def redeliver(modeladmin, request, queryset) -> None:
    count = webhook_deliveries_redeliver(delivery_ids=list(queryset.values_list("pk", flat=True)))
    modeladmin.message_user(request, f"{count} deliveries queued again.", level=messages.SUCCESS)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = [
        "event_shown",
        "endpoint",
        "status",
        "attempts",
        "last_status_code",
        "last_error_excerpt",
        "last_attempt_at",
        "next_attempt_at",
        "delivered_at",
    ]
    list_filter = ["status", "event__event_type", "endpoint__agent"]
    list_select_related = ["event", "endpoint"]
    search_fields = ["event__message_id", "endpoint__url"]
    ordering = ["-id"]
    actions = [redeliver]
    readonly_fields = [
        "event_link",
        "endpoint",
        "status",
        "attempts",
        "last_attempt_at",
        "last_status_code",
        "last_error",
        "next_attempt_at",
        "delivered_at",
    ]
    exclude = ["event"]

    def has_add_permission(self, request) -> bool:
        return False  # deliveries come from the outbox only

    def has_change_permission(self, request, obj=None) -> bool:
        return obj is None  # the list's action redelivers; the record itself is read-only

    @admin.display(description="event", ordering="event__event_type")
    def event_shown(self, delivery: WebhookDelivery) -> str:
        return f"{delivery.event.event_type} {delivery.event.message_id}"

    @admin.display(description="event")
    def event_link(self, delivery: WebhookDelivery) -> str:
        return admin_link(delivery.event)

    @admin.display(description="last error")
    def last_error_excerpt(self, delivery: WebhookDelivery) -> str:
        return text_shorten(delivery.last_error, 80)


class WebhookDeliveryInline(admin.TabularInline):
    model = WebhookDelivery
    fields = ["endpoint", "status", "attempts", "last_status_code", "last_error", "delivered_at"]
    readonly_fields = ["endpoint", "status", "attempts", "last_status_code", "last_error", "delivered_at"]
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(WebhookEvent)
class WebhookEventAdmin(admin.ModelAdmin):
    list_display = ["message_id", "event_type", "agent", "created_at"]
    list_filter = ["event_type", "agent"]
    list_select_related = ["agent"]
    search_fields = ["message_id"]
    ordering = ["-id"]
    readonly_fields = ["message_id", "agent", "event_type", "data", "created_at"]
    exclude = ["user"]
    inlines = [WebhookDeliveryInline]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
