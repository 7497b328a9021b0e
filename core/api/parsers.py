"""The API's JSON parser: JSON that PostgreSQL can store, or a 400 that names the field.

PostgreSQL `text` and `jsonb` cannot hold NUL characters, and psycopg cannot encode lone UTF-16 surrogates
(`"\\ud800"` is valid JSON but not valid UTF-8). Both would reach the database and fail there as a 500, in any field
of any endpoint, free-form `metadata` included; checking once, here, covers every field present and future.
Nesting is bounded too: the decoder would otherwise recurse until Python's recursion limit (a 500).

What cannot be read at all (not JSON, not UTF-8, NaN or Infinity, nesting too deep to decode) is a 400
`parse_error` that still names where it failed: the dotted path of the value when it can be found, else `body`."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import IO, Any

from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import JSONParser

from core.api.json_limits import MAX_REPORTED_PROBLEMS, JSONProblem, json_decode, json_unstorable_fields, json_walk

BODY_FIELD = "body"


class JSONParseProblem(ParseError):
    """A body that cannot be read as JSON; `fields` name where (the error format shows them)."""

    def __init__(self, message: str, *, fields: dict[str, list[str]]) -> None:
        super().__init__(message)
        self.fields = fields

    @classmethod
    def of(cls, fields: dict[str, list[str]]) -> JSONParseProblem:
        named = "; ".join(f"{path}: {' '.join(problems)}" for path, problems in fields.items())
        return cls(f"JSON parse error - {named}", fields=fields)


def _invalid_utf8_fields(raw: bytes, error: UnicodeDecodeError) -> dict[str, list[str]]:
    """The paths of the strings holding the invalid bytes, when the rest of the body is readable JSON."""
    problem = "Invalid UTF-8."
    try:
        data = json.loads(raw.decode("utf-8", errors="surrogateescape"))
    except (ValueError, RecursionError):
        data = None
    paths = [
        path
        for path, value, _, key in json_walk(data)
        if any(isinstance(text, str) and re.search("[\udc80-\udcff]", text) for text in (value, key))
    ]
    if not paths:
        return {BODY_FIELD: [f"{problem} The first invalid byte is at position {error.start}."]}
    return {path or BODY_FIELD: [problem] for path in paths[:MAX_REPORTED_PROBLEMS]}


def _body_fields(fields: dict[str, list[str]]) -> dict[str, list[str]]:
    return {path or BODY_FIELD: problems for path, problems in fields.items()}


class StorableJSONParser(JSONParser):
    def parse(
        self, stream: IO[Any] | None, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        raw = stream.read() if stream is not None else b""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise JSONParseProblem.of(_invalid_utf8_fields(raw, error)) from error
        try:
            data = json_decode(text)
        except JSONProblem as problem:
            raise JSONParseProblem.of(_body_fields(problem.fields)) from problem
        problems = json_unstorable_fields(data)
        if problems:
            raise ValidationError(problems)
        return data
