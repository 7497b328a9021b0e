"""Input fields stricter than DRF's: its CharField turns a number into text (`5` -> "5") and its number fields turn
`false` into 0 and "7" into 7, which hides a client's bug and stores what nobody wrote; its DictField takes an object
of any size. A JSON body says what type a value is: these fields take that type only."""

from __future__ import annotations

import json
from datetime import UTC
from typing import TYPE_CHECKING, Any

from django.conf import settings
from rest_framework import serializers

# The mixin's base for the type checker: it only ever comes before a CharField.
if TYPE_CHECKING:
    _CharField = serializers.CharField
else:
    _CharField = object


class _StringOnly(_CharField):
    """Takes only a JSON string, and checks its length as sent, before surrounding whitespace is trimmed: the
    schema's maxLength is what the API accepts."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        if self.max_length is not None and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return super().to_internal_value(data)


class StrictCharField(_StringOnly, serializers.CharField):
    """A CharField that takes only a JSON string."""


class StrictRegexField(_StringOnly, serializers.RegexField):
    """A RegexField that takes only a JSON string."""


class StrictIntegerField(serializers.IntegerField):
    """An IntegerField that takes only a JSON integer (not a boolean, a string or a float)."""

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictFloatField(serializers.FloatField):
    """A FloatField that takes only a JSON number (not a boolean or a string)."""

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        return super().to_internal_value(data)


def metadata_size_problem(value: dict) -> str | None:
    size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    if size > settings.METADATA_MAX_BYTES:
        return f"Ensure this object is no larger than {settings.METADATA_MAX_BYTES} bytes as JSON (it is {size})."
    return None


class MetadataField(serializers.DictField):
    """Free-form metadata: any JSON object up to METADATA_MAX_BYTES."""

    def to_internal_value(self, data: Any) -> dict:
        value = super().to_internal_value(data)
        if problem := metadata_size_problem(value):
            raise serializers.ValidationError(problem)
        return value


class TimeRangeInputSerializer(serializers.Serializer):
    """The time options of both searches (core.search.retrieval.time_query_read); the selectors check how they
    combine."""

    time_from = serializers.DateField(
        required=False, help_text="First day of a period (included): what was said or happened then ranks higher."
    )
    time_to = serializers.DateField(required=False, help_text="Last day of the period (included).")
    time_filter = serializers.ChoiceField(
        choices=["boost", "restrict"],
        default="boost",
        help_text="`boost`: the period's memories rank higher; `restrict`: only they are searched "
        "(needs time_from or time_to).",
    )


class StrictDurationField(serializers.DurationField):
    """A positive duration, only as a JSON string: ISO 8601 ("P7D", "PT12H") or "7 days", "3 days 04:00:00",
    "12:00:00". A bare number is refused (seconds or days? the caller must say)."""

    default_error_messages = {
        **serializers.DurationField.default_error_messages,
        "invalid": "Not a duration: give ISO 8601 (P7D, PT12H) or days and a time (7 days, 3 days 04:00:00).",
    }

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str):
            self.fail("invalid")
        value = super().to_internal_value(data)
        if value.total_seconds() <= 0:
            raise serializers.ValidationError("must be a positive duration.")
        return value


class HoldsAtField(serializers.DateField):
    """A moment in the world (search's `holds_at`): a date, or a date-time (its day, in UTC)."""

    def to_internal_value(self, value: Any) -> Any:
        if isinstance(value, str) and "T" in value:
            moment = serializers.DateTimeField().to_internal_value(value)
            return moment.astimezone(UTC).date()
        return super().to_internal_value(value)
