from django.conf import settings
from rest_framework import serializers

from core.api.fields import StrictCharField, StrictIntegerField
from reflections.models import ConsolidatedMemory, ConsolidatedMemoryVersion, MemoryScope, Reflection


class ScopeFilterSerializer(serializers.Serializer):
    scope = serializers.ChoiceField(choices=MemoryScope.choices, required=False)
    user = serializers.CharField(max_length=200, required=False, help_text="End user id: that user's scopes.")
    session = serializers.CharField(max_length=200, required=False, help_text="Session id: that session's scope.")


class ReflectionListFilterSerializer(ScopeFilterSerializer):
    absorbed = serializers.BooleanField(
        required=False, allow_null=True, default=None, help_text="false: still buffered; true: in a blob already."
    )


class ReflectionOutputSerializer(serializers.ModelSerializer):
    user = serializers.CharField(source="user.external_id", allow_null=True, default=None)
    session = serializers.CharField(source="session.external_id", allow_null=True, default=None)

    class Meta:
        model = Reflection
        fields = [
            "id",
            "scope",
            "user",
            "session",
            "content",
            "source",
            "created_at",
            "absorbed",
            "absorbed_at",
            "consolidated_into",
            "consolidated_into_version",
        ]


class ReflectionCreateInputSerializer(serializers.Serializer):
    scope = serializers.ChoiceField(choices=MemoryScope.choices)
    content = StrictCharField(
        max_length=settings.REFLECTION_MAX_CHARS,
        help_text=f"At most {settings.REFLECTION_MAX_WORDS} words and {settings.REFLECTION_MAX_CHARS} characters.",
    )
    user = StrictCharField(max_length=200, required=False, help_text="Required for user and session scope.")
    session = StrictCharField(
        max_length=200, required=False, help_text="Required for session scope; an existing session."
    )


class ConsolidatedMemoryOutputSerializer(serializers.ModelSerializer):
    user = serializers.CharField(source="user.external_id", allow_null=True, default=None)
    session = serializers.CharField(source="session.external_id", allow_null=True, default=None)

    class Meta:
        model = ConsolidatedMemory
        fields = [
            "id",
            "scope",
            "user",
            "session",
            "content",
            "word_limit",
            "version",
            "change_reason",
            "last_consolidated_at",
            "updated_at",
        ]


class ConsolidatedMemoryVersionOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = ConsolidatedMemoryVersion
        fields = ["version", "content", "word_limit", "change_reason", "created_at", "replaced_at"]


class ConsolidatedMemoryDetailOutputSerializer(ConsolidatedMemoryOutputSerializer):
    past_versions = serializers.SerializerMethodField(help_text="Versions this blob replaced, newest first.")

    class Meta(ConsolidatedMemoryOutputSerializer.Meta):
        fields = [*ConsolidatedMemoryOutputSerializer.Meta.fields, "past_versions"]

    def get_past_versions(self, memory: ConsolidatedMemory) -> list[dict]:
        versions = memory.past_versions.order_by("-version")
        # many=True makes a ListSerializer, whose data is a list; the stubs type the child's.
        return ConsolidatedMemoryVersionOutputSerializer(versions, many=True).data  # type: ignore[return-value]


class ConsolidatedMemoryEditInputSerializer(serializers.Serializer):
    content = StrictCharField(
        max_length=settings.BLOB_MAX_CHARS,
        help_text=f"The blob's new text, within its word limit and {settings.BLOB_MAX_CHARS} characters.",
    )
    reason = StrictCharField(max_length=300, required=False, default="edited through the API")
    expected_version = StrictIntegerField(
        min_value=1, required=False, help_text="Refuse (409) if the blob is no longer at this version."
    )
