from __future__ import annotations

from rest_framework import serializers

from api.facts.serializers import FactOutputSerializer
from api.facts.world_time import WorldTimeField
from conversations.models import Message
from core.api.fields import StrictCharField
from facts.models import Entity, Fact, Relation


class EntityListFilterSerializer(serializers.Serializer):
    user = StrictCharField(
        max_length=200, required=False, help_text="This end user's entities; without it, the agent-wide ones."
    )
    q = StrictCharField(
        max_length=200, required=False, help_text="Entities whose name or an alias contains it (any case)."
    )


class EntityOutputSerializer(serializers.ModelSerializer):
    user = serializers.CharField(source="user.external_id", allow_null=True, default=None)
    merged_into: serializers.PrimaryKeyRelatedField[Entity] = serializers.PrimaryKeyRelatedField(
        read_only=True,
        allow_null=True,
        help_text="Set when this entity was merged into another (it then has no aliases or relations of its own).",
    )

    class Meta:
        model = Entity
        fields = ["id", "user", "name", "entity_type", "aliases", "is_user", "merged_into", "created_at", "updated_at"]
        read_only_fields = fields


class EntityReferenceSerializer(serializers.ModelSerializer):
    class Meta:
        model = Entity
        fields = ["id", "name", "entity_type"]
        read_only_fields = fields


class RelationOutputSerializer(serializers.ModelSerializer):
    subject = EntityReferenceSerializer()
    object_entity = EntityReferenceSerializer(allow_null=True)
    is_current = serializers.BooleanField()
    world_time = WorldTimeField()
    source_facts: serializers.PrimaryKeyRelatedField[Fact] = serializers.PrimaryKeyRelatedField(
        many=True, read_only=True
    )
    source_messages: serializers.PrimaryKeyRelatedField[Message] = serializers.PrimaryKeyRelatedField(
        many=True, read_only=True
    )

    class Meta:
        model = Relation
        fields = [
            "id",
            "subject",
            "predicate",
            "object_entity",
            "object_value",
            "valid_from",
            "valid_to",
            "is_current",
            "world_time",
            "closed_reason",
            "formed_at",
            "source_facts",
            "source_messages",
        ]
        read_only_fields = fields


class EntityDetailOutputSerializer(serializers.Serializer):
    entity = EntityOutputSerializer()
    relations = RelationOutputSerializer(
        many=True, help_text="Where the entity is the subject or the object, current and ended, most recent first."
    )
    facts = FactOutputSerializer(many=True, help_text="The fact versions that stated those relations.")
