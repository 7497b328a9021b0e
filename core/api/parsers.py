"""The API's JSON parser: JSON that PostgreSQL can store, or a 400 that names the field.

PostgreSQL `text` and `jsonb` cannot hold NUL characters, and psycopg cannot encode lone UTF-16 surrogates
(`"\\ud800"` is valid JSON but not valid UTF-8). Both would reach the database and fail there as a 500, in any field
of any endpoint, free-form `metadata` included; checking once, here, covers every field present and future.
Nesting is bounded too: the decoder would otherwise recurse until Python's recursion limit (a 500)."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import JSONParser

MAX_JSON_DEPTH = 32
MAX_REPORTED_PROBLEMS = 20


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "Null characters are not allowed."
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "Lone surrogate characters (invalid Unicode) are not allowed."
    return None


def _field_name(key: str) -> str:
    return key.encode("unicode_escape", errors="backslashreplace").decode("ascii")


def json_unstorable_fields(data: Any) -> dict[str, list[str]]:
    """Dotted paths (`messages.0.metadata.note`) of the strings and keys PostgreSQL cannot store, and of values
    nested deeper than MAX_JSON_DEPTH. Iterative, so that a hostile document cannot exhaust the stack."""
    problems: dict[str, list[str]] = {}
    stack: list[tuple[str, Any, int]] = [("", data, 0)]
    while stack and len(problems) < MAX_REPORTED_PROBLEMS:
        path, value, depth = stack.pop()
        if isinstance(value, str):
            if problem := _text_problem(value):
                problems[path or "non_field_errors"] = [problem]
            continue
        if not isinstance(value, dict | list):
            continue
        if depth >= MAX_JSON_DEPTH:
            problems[path or "non_field_errors"] = [f"Nested deeper than {MAX_JSON_DEPTH} levels."]
            continue
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            name = f"{path}.{_field_name(str(key))}" if path else _field_name(str(key))
            if isinstance(key, str) and (problem := _text_problem(key)):
                problems[name] = [f"Field name: {problem}"]
                continue
            stack.append((name, item, depth + 1))
    return problems


class StorableJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError as error:
            raise ParseError(f"JSON parse error - nested deeper than {MAX_JSON_DEPTH} levels.") from error
        problems = json_unstorable_fields(data)
        if problems:
            raise ValidationError(problems)
        return data
