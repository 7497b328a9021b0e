from django.db import models
from rest_framework import serializers

from agents.categories import (
    MAX_CATEGORY_DESCRIPTION_LENGTH,
    MAX_CATEGORY_EXAMPLE_LENGTH,
    MAX_CATEGORY_EXAMPLES,
    MAX_CATEGORY_NAME_LENGTH,
    MAX_CATEGORY_SLUG_LENGTH,
    MAX_CUSTOM_CATEGORIES,
    category_settings_errors,
)
from agents.models import Agent, AgentAPIKey
from agents.services.agents import AGENT_SETTINGS
from core.api.fields import StrictCharField, StrictIntegerField, StrictRegexField
from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEventType

EXTERNAL_ID_MAX_LENGTH = 200


class MemoryCategorySettingSerializer(serializers.Serializer):
    """One of an agent's own categories (agents.categories.MemoryCategory)."""

    slug = StrictCharField(
        max_length=MAX_CATEGORY_SLUG_LENGTH, help_text="Lowercase letters, digits and _, starting with a letter."
    )
    name = StrictCharField(max_length=MAX_CATEGORY_NAME_LENGTH, required=False, allow_blank=True)
    description = StrictCharField(
        max_length=MAX_CATEGORY_DESCRIPTION_LENGTH,
        required=False,
        allow_blank=True,
        help_text="What belongs in it, as the extraction prompt lists it.",
    )
    examples = serializers.ListField(
        child=StrictCharField(max_length=MAX_CATEGORY_EXAMPLE_LENGTH),
        required=False,
        max_length=MAX_CATEGORY_EXAMPLES,
        help_text='Statements that belong in it ("The user ordered a blue kettle.").',
    )


class AgentSettingsSerializer(serializers.ModelSerializer):
    """Every per-agent setting the admin's agent page edits. An empty (null) threshold, cap or budget: the
    deployment's setting applies. Text and numbers take their JSON type only, as every input of the API does."""

    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        models.CharField: StrictCharField,
        models.PositiveIntegerField: StrictIntegerField,
        models.PositiveBigIntegerField: StrictIntegerField,
    }

    memory_categories = serializers.ListField(
        child=MemoryCategorySettingSerializer(),
        required=False,
        max_length=MAX_CUSTOM_CATEGORIES,
        help_text="The agent's own categories (at most 20), filed under as the defaults are; their examples also "
        "extend the offline extractor's lexicons.",
    )
    categories_never_remembered = serializers.ListField(
        child=StrictCharField(max_length=MAX_CATEGORY_SLUG_LENGTH),
        required=False,
        help_text="Slugs of categories (default or the agent's own) formation never stores.",
    )
    extraction_instructions = StrictCharField(
        required=False,
        allow_blank=True,
        help_text="Free text carried into the extraction prompt, at most 2,000 characters; refused (400) when it "
        "reads as a prompt injection or holds a secret.",
    )

    class Meta:
        model = Agent
        fields = list(AGENT_SETTINGS)
        extra_kwargs = {"name": {"required": False}}

    def validate(self, attrs: dict) -> dict:
        """The category settings are checked together (a category never remembered must be one the agent has):
        what the request gives over what is stored."""
        names = ("memory_categories", "default_categories_enabled", "categories_never_remembered")
        if any(name in attrs for name in (*names, "extraction_instructions")):
            current = {
                name: attrs.get(name, getattr(self.instance, name) if self.instance is not None else default)
                for name, default in zip(names, ([], True, []), strict=True)
            }
            instructions = attrs.get(
                "extraction_instructions", self.instance.extraction_instructions if self.instance is not None else ""
            )
            current["memory_categories"] = [dict(item) for item in current["memory_categories"]]
            errors = category_settings_errors(**current, extraction_instructions=instructions)
            if errors:
                raise serializers.ValidationError(errors)
            if "memory_categories" in attrs:
                attrs["memory_categories"] = current["memory_categories"]
        return attrs


class AgentCreateInputSerializer(AgentSettingsSerializer):
    agent = StrictRegexField(
        r"^[^/\x00]+$",
        max_length=EXTERNAL_ID_MAX_LENGTH,
        help_text="The agent's id: what its API keys act for, and what X-Agent-ID names.",
        error_messages={"invalid": "must not contain '/'."},
    )

    class Meta(AgentSettingsSerializer.Meta):
        fields = ["agent", *AGENT_SETTINGS]

    def validate_agent(self, value: str) -> str:
        if Agent.objects.filter(external_id=value).exists():
            raise serializers.ValidationError("an agent with this id exists.")
        return value


class AgentOutputSerializer(AgentSettingsSerializer):
    agent = serializers.CharField(source="external_id")

    class Meta(AgentSettingsSerializer.Meta):
        fields = ["agent", *AGENT_SETTINGS, "created_at", "updated_at"]


class APIKeyCreateInputSerializer(serializers.Serializer):
    name = StrictCharField(max_length=100, required=False, default="", help_text="What the key is for.")


class APIKeyOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = AgentAPIKey
        fields = ["id", "prefix", "name", "created_at", "last_used_at", "revoked_at"]


class APIKeyCreatedOutputSerializer(APIKeyOutputSerializer):
    key = serializers.CharField(help_text="The key itself: shown this once, never again. Store it now.")

    class Meta(APIKeyOutputSerializer.Meta):
        fields = [*APIKeyOutputSerializer.Meta.fields, "key"]


_EVENT_TYPES = serializers.ListField(
    child=serializers.ChoiceField(choices=WebhookEventType.choices),
    min_length=1,
    max_length=len(WebhookEventType.values),
    required=False,
    help_text="The events sent to the endpoint (default: every type).",
)


class WebhookCreateInputSerializer(serializers.Serializer):
    url = StrictCharField(max_length=2000, help_text="https:// on a public host (the service checks it resolves so).")
    event_types = _EVENT_TYPES
    description = StrictCharField(max_length=300, required=False, default="")
    secret = StrictCharField(
        max_length=200, required=False, help_text="whsec_ and base64 of 24 to 64 bytes; default: a new one."
    )
    is_active = serializers.BooleanField(required=False, default=True)


class WebhookUpdateInputSerializer(serializers.Serializer):
    url = StrictCharField(max_length=2000, required=False)
    event_types = _EVENT_TYPES
    description = StrictCharField(max_length=300, required=False)
    secret = StrictCharField(max_length=200, required=False)
    rotate_secret = serializers.BooleanField(
        required=False, default=False, help_text="Replace the secret by a new one."
    )
    is_active = serializers.BooleanField(required=False)


class WebhookOutputSerializer(serializers.ModelSerializer):
    secret = serializers.CharField(
        help_text="Signs every request (Standard Webhooks: HMAC-SHA256 of `webhook-id.webhook-timestamp.body`)."
    )

    class Meta:
        model = WebhookEndpoint
        fields = ["id", "url", "description", "event_types", "is_active", "secret", "created_at", "updated_at"]


class WebhookDeliveryOutputSerializer(serializers.ModelSerializer):
    event_type = serializers.CharField(source="event.event_type")
    message_id = serializers.CharField(source="event.message_id", help_text="The webhook-id header sent.")
    event_created_at = serializers.DateTimeField(source="event.created_at")

    class Meta:
        model = WebhookDelivery
        fields = [
            "id",
            "event_type",
            "message_id",
            "event_created_at",
            "status",
            "attempts",
            "last_attempt_at",
            "last_status_code",
            "last_error",
            "next_attempt_at",
            "delivered_at",
        ]
