"""The profile over REST (facts.selectors.profile): its filters and its entries by category."""

from __future__ import annotations

from rest_framework import serializers

from api.facts.world_time import WorldTimeField
from core.api.fields import StrictCharField

MAX_CATEGORY_FILTERS = 20


class ProfileFilterSerializer(serializers.Serializer):
    """`category`: comma-separated slugs, each one of the agent's categories (the view checks, naming the field)."""

    category = StrictCharField(
        required=False,
        max_length=MAX_CATEGORY_FILTERS * 51,
        help_text="Only these categories, comma-separated (activities,places); all of the agent's when left out.",
    )

    def validate_category(self, value: str) -> list[str]:
        slugs = [slug.strip() for slug in value.split(",") if slug.strip()]
        if not slugs:
            raise serializers.ValidationError("name at least one category, or leave the parameter out.")
        if len(slugs) > MAX_CATEGORY_FILTERS:
            raise serializers.ValidationError(f"at most {MAX_CATEGORY_FILTERS} categories.")
        return slugs

    include_history = serializers.BooleanField(
        default=False,
        help_text="Also the ended entries (none of their facts holds today), per category under `history`.",
    )


class ProfileFactSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    content = serializers.CharField()
    version = serializers.IntegerField()
    recorded_at = serializers.DateTimeField(source="valid_from", help_text="When memory recorded this version.")
    world_time = WorldTimeField()


class ProfileEntrySerializer(serializers.Serializer):
    value = serializers.CharField(
        help_text="What the entry gives in its category: the canonical value its facts share, or the fact's statement "
        "when it has none."
    )
    mentions = serializers.IntegerField(help_text="How many current facts say it.")
    last_mentioned = serializers.DateTimeField(help_text="When memory last recorded a fact that says it.")
    world_time = WorldTimeField(
        help_text="When it held in the world: its newest fact's that holds today, else its newest fact's."
    )
    facts = ProfileFactSerializer(many=True, help_text="Its source facts, newest first (at most five).")


class ProfileCategorySerializer(serializers.Serializer):
    category = serializers.CharField(help_text="The category's slug.")
    name = serializers.CharField(help_text="The category's name, as the admin shows it.")
    entries = ProfileEntrySerializer(many=True, help_text="What holds now, most recently mentioned first.")
    history = ProfileEntrySerializer(
        many=True, required=False, help_text="With include_history: the entries that ended, most recent first."
    )


class ProfileAttributeSerializer(serializers.Serializer):
    key = serializers.CharField()
    value = serializers.CharField()
    memory_id = serializers.IntegerField(source="fact_id", help_text="The fact that holds the key.")


class ProfileOutputSerializer(serializers.Serializer):
    user = serializers.CharField(allow_null=True, help_text="The end user; null for the agent-wide profile.")
    categories = ProfileCategorySerializer(
        many=True, help_text="The categories that have entries, in the agent's order."
    )
    attributes = ProfileAttributeSerializer(
        many=True,
        help_text="The user's keyed attributes (home_city, employer, ...): key → value, as before categories.",
    )
    truncated = serializers.BooleanField(
        help_text="More facts than a profile reads (2,000): the entries are built from the newest."
    )
