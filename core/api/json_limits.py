"""JSON within this service's limits, for request bodies and for JSON carried inside string fields (a tool call's
`arguments`): nesting at most MAX_JSON_DEPTH levels, numbers a float or a reasonable integer can hold, and text that
PostgreSQL can store (no NUL characters, no lone UTF-16 surrogates). Every problem is reported with the dotted path
of the value (`messages.0.metadata.note`), so that a 400 can name the field. Iterative where the input decides the
depth, so that a hostile document cannot exhaust the stack."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

MAX_JSON_DEPTH = 32
MAX_REPORTED_PROBLEMS = 20
TOO_DEEP = f"Nested deeper than {MAX_JSON_DEPTH} levels."
# Python refuses to convert longer integer literals (ValueError); nothing this service reads takes numbers that large.
MAX_INTEGER_DIGITS = 4000


class JSONProblem(ValueError):
    """JSON that cannot be read. `fields`: what failed where, by dotted path relative to the decoded text ("" for the
    text as a whole). `is_syntax`: the text is not JSON at all, rather than JSON beyond this service's limits."""

    def __init__(self, *, fields: dict[str, list[str]], is_syntax: bool = False) -> None:
        super().__init__("; ".join(f"{path or '(root)'}: {' '.join(problems)}" for path, problems in fields.items()))
        self.fields = fields
        self.is_syntax = is_syntax


class _Unreadable:
    """Stands for a number that cannot be carried (NaN, Infinity, 1e999, thousands of digits) until the walk reports
    where it was."""

    def __init__(self, literal: str) -> None:
        self.literal = literal if len(literal) <= 20 else literal[:20] + "…"


def _field_name(key: str) -> str:
    return key.encode("unicode_escape", errors="backslashreplace").decode("ascii")


def _joined(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix and name else (prefix or name)


def json_walk(data: Any) -> Iterator[tuple[str, Any, int, Any]]:
    """Every value with its dotted path, depth and the key it sits under (None for list items and the root).
    Iterative, so that a hostile document cannot exhaust the stack; containers deeper than MAX_JSON_DEPTH are
    yielded but not entered."""
    stack: list[tuple[str, Any, int, Any]] = [("", data, 0, None)]
    while stack:
        path, value, depth, key = stack.pop()
        yield path, value, depth, key
        if isinstance(value, dict | list) and depth < MAX_JSON_DEPTH:
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for child_key, item in items:
                name = _joined(path, _field_name(str(child_key)))
                stack.append((name, item, depth + 1, child_key if isinstance(value, dict) else None))


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "Null characters are not allowed."
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "Lone surrogate characters (invalid Unicode) are not allowed."
    return None


def json_unstorable_fields(data: Any) -> dict[str, list[str]]:
    """Dotted paths (`messages.0.metadata.note`) of the strings and keys PostgreSQL cannot store, and of values
    nested deeper than MAX_JSON_DEPTH."""
    problems: dict[str, list[str]] = {}
    for path, value, depth, key in json_walk(data):
        if len(problems) >= MAX_REPORTED_PROBLEMS:
            break
        # An empty key adds nothing to a path: the first (outermost) problem found at a path is the one reported.
        if isinstance(key, str) and (problem := _text_problem(key)):
            problems.setdefault(path, [f"Field name: {problem}"])
        elif isinstance(value, str) and (problem := _text_problem(value)):
            problems.setdefault(path or "non_field_errors", [problem])
        elif isinstance(value, dict | list) and depth >= MAX_JSON_DEPTH:
            problems.setdefault(path or "non_field_errors", [TOO_DEEP])
    return problems


# Strings (with their escapes) and the structural characters: enough to follow nesting without decoding.
_STRUCTURE = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]', re.DOTALL)


def _too_deep_path(text: str) -> str | None:
    """Where a document first nests deeper than MAX_JSON_DEPTH, found by scanning its structure, for a document too
    deep for the decoder to return at all."""
    stack: list[list] = []  # per open container: [is_object, current key or index, expecting a key]
    for match in _STRUCTURE.finditer(text):
        token = match.group()
        if token[0] == '"':
            if stack and stack[-1][0] and stack[-1][2]:
                try:
                    stack[-1][1] = json.loads(token)
                except ValueError:
                    stack[-1][1] = token[1:-1]
        elif token in "[{":
            if len(stack) >= MAX_JSON_DEPTH:
                return ".".join(_field_name(str(entry[1])) for entry in stack)
            stack.append([token == "{", "" if token == "{" else 0, token == "{"])
        elif token in "]}":
            if stack:
                stack.pop()
        elif stack and token == ":":
            stack[-1][2] = False
        elif stack and token == ",":
            if stack[-1][0]:
                stack[-1][2] = True
            else:
                stack[-1][1] += 1
    return None


def json_decode(text: str) -> Any:
    """Decode JSON text, refusing what JSON or PostgreSQL cannot carry: raises JSONProblem naming the path of
    a NaN, an Infinity or a number too large to read, the path where nesting goes deeper than MAX_JSON_DEPTH,
    or "" (the whole text) for a syntax error. The decoded value still needs json_unstorable_fields."""
    unreadable: list[_Unreadable] = []

    def refused(literal: str) -> _Unreadable:
        unreadable.append(_Unreadable(literal))
        return unreadable[-1]

    def number(literal: str) -> float | _Unreadable:
        value = float(literal)
        return value if math.isfinite(value) else refused(literal)

    def integer(literal: str) -> int | _Unreadable:
        return int(literal) if len(literal.lstrip("-")) <= MAX_INTEGER_DIGITS else refused(literal)

    try:
        data = json.loads(text, parse_constant=refused, parse_float=number, parse_int=integer)
    except RecursionError as error:
        raise JSONProblem(fields={_too_deep_path(text) or "": [TOO_DEEP]}) from error
    except json.JSONDecodeError as error:
        problem = f"{error.msg} at line {error.lineno} column {error.colno} (character {error.pos})."
        raise JSONProblem(fields={"": [problem]}, is_syntax=True) from error
    if unreadable:
        fields = {
            path: [f"{value.literal} is not a number this service reads (NaN, Infinity, beyond a float, too long)."]
            for path, value, _, _ in json_walk(data)
            if isinstance(value, _Unreadable)
        }
        # A number the walk did not reach is nested beyond the limit, which is what to report then.
        raise JSONProblem(fields=fields or json_unstorable_fields(data))
    return data
