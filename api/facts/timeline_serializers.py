"""The timeline over REST (facts.selectors.timeline): its filters, its page cursor and its entries."""

from __future__ import annotations

from rest_framework import serializers

from api.facts.world_time import WorldTimeField
from core.api.fields import StrictCharField
from facts.models import Fact
from facts.selectors.timeline import (
    TIMELINE_CURSOR_MAX_LENGTH,
    TIMELINE_PAGE_MAX,
    Happened,
    PlacedBy,
    TimelinePosition,
    timeline_position_parse,
)

TIMELINE_PAGE_SIZE = 50


class TimelineFilterSerializer(serializers.Serializer):
    time_from = serializers.DateField(
        required=False,
        help_text="Entries placed on or after this day (an entry is placed by when it happened in the world, or by "
        "when memory recorded it when that is unknown).",
    )
    time_to = serializers.DateField(required=False, help_text="Entries placed on or before this day.")
    page_size = serializers.IntegerField(min_value=1, max_value=TIMELINE_PAGE_MAX, default=TIMELINE_PAGE_SIZE)
    cursor = StrictCharField(
        max_length=TIMELINE_CURSOR_MAX_LENGTH, required=False, help_text="The `next` link's cursor: the page after it."
    )

    def validate_cursor(self, value: str) -> TimelinePosition:
        try:
            return timeline_position_parse(value)
        except ValueError as error:
            raise serializers.ValidationError("not a cursor this timeline issued: use the `next` link.") from error

    def validate(self, data: dict) -> dict:
        if "time_from" in data and "time_to" in data and data["time_to"] < data["time_from"]:
            raise serializers.ValidationError({"time_to": ["is before time_from."]})
        return data


class TimelineFactSerializer(serializers.ModelSerializer):
    user = serializers.CharField(source="user.external_id", allow_null=True, default=None)
    is_current = serializers.BooleanField()

    class Meta:
        model = Fact
        fields = ["id", "content", "version", "lineage", "is_current", "scopes", "user", "key"]
        read_only_fields = fields


class TimelineMessageSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    session = serializers.CharField(source="session.external_id", help_text="The session's id in your system.")
    said_at = serializers.DateTimeField(source="created_at")


class TimelineEntryOutputSerializer(serializers.Serializer):
    happened = serializers.ChoiceField(
        choices=[(kind.value, kind.value) for kind in Happened],
        help_text="started: a statement memory was told; ended: a version saying it stopped holding in the world; "
        "corrected: the record was set right (a version that says something else, or one closed without a "
        "successor).",
    )
    at = serializers.DateField(help_text="Where the entry sits on the timeline (see placed_by).")
    placed_by = serializers.ChoiceField(
        choices=[(kind.value, kind.value) for kind in PlacedBy],
        help_text="start or end: the statement's start or end in the world; recorded: not known in the world, the day "
        "memory recorded it.",
    )
    recorded_at = serializers.DateTimeField(help_text="When memory recorded it (a closing: when it was closed).")
    reason = serializers.CharField(help_text="Why the version was written (a closing: why it was closed).")
    fact = TimelineFactSerializer(help_text="The fact version.")
    world_time = WorldTimeField(source="fact")
    source_messages = TimelineMessageSerializer(
        many=True, source="messages", help_text="The messages that said it (a closing: those that closed it)."
    )


class TimelinePageOutputSerializer(serializers.Serializer):
    next = serializers.URLField(allow_null=True, help_text="The next page; null after the last.")
    results = TimelineEntryOutputSerializer(many=True, help_text="In world-time order, the earliest first.")
