from rest_framework import serializers

from agents.models import EndUser
from portability.selectors.user_memory import UserMemoryCounts


class UserListFilterSerializer(serializers.Serializer):
    active_after = serializers.DateTimeField(
        required=False, help_text="Users active at or after this time (their latest session's activity)."
    )
    active_before = serializers.DateTimeField(
        required=False, help_text="Users not active since this time: candidates for clean-up or erasure."
    )


class UserOutputSerializer(serializers.ModelSerializer):
    user = serializers.CharField(source="external_id", help_text="The end user's id in your system.")
    last_active_at = serializers.DateTimeField(
        help_text="Their latest session's last activity; when they were first seen if they have no session."
    )

    class Meta:
        model = EndUser
        fields = ["user", "metadata", "created_at", "last_active_at"]


class UserMemoryCountsSerializer(serializers.Serializer):
    """What is kept about the user, counted by kind: the rows an erasure deletes."""

    current_facts = serializers.IntegerField()
    closed_fact_versions = serializers.IntegerField()
    fact_embeddings = serializers.IntegerField()
    buffered_reflections = serializers.IntegerField()
    absorbed_reflections = serializers.IntegerField()
    blobs = serializers.IntegerField()
    past_blob_versions = serializers.IntegerField()
    sessions = serializers.IntegerField()
    messages = serializers.IntegerField()
    message_embeddings = serializers.IntegerField()
    formation_jobs = serializers.IntegerField()
    consolidation_jobs = serializers.IntegerField()
    entities = serializers.IntegerField()
    relations = serializers.IntegerField()
    held_memories = serializers.IntegerField()
    feedback = serializers.IntegerField()

    def to_representation(self, instance: UserMemoryCounts) -> dict:
        return instance.as_dict()


class UserDetailOutputSerializer(UserOutputSerializer):
    memory = UserMemoryCountsSerializer(help_text="What is kept about the user, counted by kind.")

    class Meta(UserOutputSerializer.Meta):
        fields = [*UserOutputSerializer.Meta.fields, "memory"]


class ErasureRecordOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    erased_at = serializers.DateTimeField()
    requested_by = serializers.CharField(help_text="Who asked: the API key (its prefix and name), an admin, a command.")
    deleted_counts = serializers.DictField(child=serializers.IntegerField(), help_text="Rows deleted, per kind.")
    user_external_id_hash = serializers.CharField(
        help_text="SHA-256 of the agent's and the user's ids: the record keeps no id of the user."
    )


class UserEraseOutputSerializer(serializers.Serializer):
    user = serializers.CharField()
    already_erased = serializers.BooleanField(
        help_text="True when an earlier request erased this user: this one changed nothing (erasure is idempotent)."
    )
    erasure = ErasureRecordOutputSerializer()
