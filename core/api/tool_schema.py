"""The JSON Schema of a tool's arguments, read from the serializer that validates them: a tool's arguments are
declared once, and what a model is shown (OpenAI's function `parameters`, MCP's `inputSchema`) states every limit
the server enforces: strings with their length, integers with their bounds, choices as `enum`, lists with their
length and their items' limits, booleans, a regular expression as `pattern`, dates and times by their `format`;
each field's help text is its description. Only the fields the tools use are mapped; another is a TypeError, found
the first time the definitions are built."""

from __future__ import annotations

import re
from typing import Any

from django.core.validators import RegexValidator
from rest_framework import serializers


def serializer_json_schema(serializer_class: type[serializers.Serializer]) -> dict[str, Any]:
    """An object of the serializer's fields, the ones without a default required, no other property allowed."""
    fields = serializer_class().fields
    return {
        "type": "object",
        "properties": {name: field_json_schema(field) for name, field in fields.items()},
        "required": [name for name, field in fields.items() if field.required],
        "additionalProperties": False,
    }


def field_json_schema(field: serializers.Field) -> dict[str, Any]:
    schema: dict[str, Any]
    if isinstance(field, serializers.BooleanField):
        schema = {"type": "boolean"}
    elif isinstance(field, serializers.IntegerField):
        schema = {"type": "integer"} | _bounds(minimum=field.min_value, maximum=field.max_value)
    elif isinstance(field, serializers.ChoiceField):
        schema = {"type": "string", "enum": [str(choice) for choice in field.choices]}
    elif isinstance(field, serializers.ListField):
        schema = {"type": "array", "items": field_json_schema(field.child)}
        schema |= _bounds(minItems=field.min_length, maxItems=field.max_length)
    elif isinstance(field, serializers.DateTimeField):
        schema = {"type": "string", "format": "date-time"}
    elif isinstance(field, serializers.DateField):
        schema = {"type": "string", "format": "date"}
    elif isinstance(field, serializers.DurationField):
        schema = {"type": "string", "format": "duration"}  # ISO 8601 ("P7D"); "7 days" is accepted too
    elif isinstance(field, serializers.CharField):
        schema = {"type": "string"}
        schema |= _bounds(minLength=field.min_length or (None if field.allow_blank else 1), maxLength=field.max_length)
        patterns = [validator.regex for validator in field.validators if isinstance(validator, RegexValidator)]
        if patterns:
            schema["pattern"] = _pattern(patterns[0])
    else:
        raise TypeError(f"no JSON Schema for a {type(field).__name__} ({field.field_name})")
    if field.help_text:
        schema["description"] = str(field.help_text)
    return schema


def _bounds(**limits: int | float | None) -> dict[str, int | float]:
    return {name: value for name, value in limits.items() if value is not None}


def _pattern(regex: str | re.Pattern[str]) -> str:
    return regex.pattern if isinstance(regex, re.Pattern) else regex
