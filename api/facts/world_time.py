"""World time over REST (facts.world_time): how a fact version or a relation shows when its statement held, and how a
client gives it."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.fields import StrictCharField
from facts.world_time import END_PRECISIONS, START_PRECISIONS, TimePrecision, WorldTime, WorldTimeInvalid, bound_parse

_PRECISION_HELP = (
    "day, month (the date is the month's first day), year (January 1st), approximate (a rough date the statement gave)"
)


class WorldTimeOutputSerializer(serializers.Serializer):
    """The schema of `world_time` in outputs (WorldTimeField renders it)."""

    start = serializers.DateField(allow_null=True, help_text="When the statement began to hold; null: unknown.")
    start_precision = serializers.CharField(help_text=f"{_PRECISION_HELP}; empty without a start.")
    end = serializers.DateField(
        allow_null=True, help_text="When it stopped holding (the day the next began); null: not ended, or unknown when."
    )
    end_precision = serializers.CharField(
        help_text=f"{_PRECISION_HELP}, unknown (it ended, when is not known); empty: not ended as far as memory knows."
    )
    holds_now = serializers.BooleanField(help_text="Whether it holds today, as far as memory knows.")


@extend_schema_field(WorldTimeOutputSerializer)
class WorldTimeField(serializers.Field):
    """A fact version's or relation's world time, read from the instance itself (source="*")."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("source", "*")
        kwargs.setdefault("read_only", True)
        kwargs.setdefault("help_text", "When the statement held in the world (not when memory recorded it).")
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> dict[str, object]:
        return value.world_time.as_dict(today=timezone.now().date())


class WorldTimeInputSerializer(serializers.Serializer):
    """When a statement held, as a client gives it. A date may be written YYYY, YYYY-MM or YYYY-MM-DD: its precision
    follows unless given."""

    start = StrictCharField(max_length=11, required=False, allow_null=True, help_text="YYYY, YYYY-MM or YYYY-MM-DD.")
    start_precision = serializers.ChoiceField(choices=list(START_PRECISIONS), required=False)
    end = StrictCharField(max_length=11, required=False, allow_null=True, help_text="YYYY, YYYY-MM or YYYY-MM-DD.")
    end_precision = serializers.ChoiceField(
        choices=list(END_PRECISIONS), required=False, help_text="'unknown' without an end: it ended, when unknown."
    )

    def validate(self, data: dict) -> WorldTime:  # validated_data becomes the value itself
        try:
            start, start_precision = _bound(data, "start")
            end, end_precision = _bound(data, "end")
            return WorldTime(start=start, start_precision=start_precision, end=end, end_precision=end_precision)
        except WorldTimeInvalid as error:
            raise serializers.ValidationError({error.field: [str(error)]}) from error


def _bound(data: dict, name: str) -> tuple[Any, str]:
    text, precision = data.get(name), data.get(f"{name}_precision", "")
    if not text:
        if precision and precision != TimePrecision.UNKNOWN:
            raise WorldTimeInvalid(name, f"a {name}_precision needs a {name}")
        return None, precision
    value, written_precision = bound_parse(text, field=name)
    return value, precision or written_precision
