"""Parsing shared by the readers: ids and dates as older stores wrote them, JSON files in their usual shapes."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from core.exceptions import ApplicationError

ROLE_ALIASES = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "bot": "assistant",
    "agent": "assistant",
    "system": "system",
    "tool": "tool",
    "function": "tool",
}


class ImportFormatError(ApplicationError):
    code = "import_format"


def plain_id(value: object) -> str:
    """Mongo extended JSON writes ObjectIds as {"$oid": "..."}."""
    if isinstance(value, dict) and "$oid" in value:
        return str(value["$oid"])
    return str(value)


def parse_timestamp(value: object) -> datetime | None:
    """ISO 8601 (naive means UTC), epoch seconds or milliseconds, or Mongo's {"$date": ...}."""
    if value in (None, ""):
        return None
    if isinstance(value, dict) and "$date" in value:
        return parse_timestamp(value["$date"])
    if isinstance(value, dict) and "$numberLong" in value:
        return parse_timestamp(int(value["$numberLong"]))
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = value / 1000 if value > 10**11 else value
        return datetime.fromtimestamp(seconds, tz=UTC)
    if isinstance(value, datetime):
        parsed = value
    else:
        try:
            parsed = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
        except ValueError as error:
            raise ImportFormatError(f"unreadable timestamp {value!r}") from error
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def message_role(value: object) -> str:
    return ROLE_ALIASES.get(str(value or "").strip().lower(), "other")


def read_json_records(path: Path, *, list_keys: tuple[str, ...] = ()) -> list[dict]:
    """A JSON array, an object holding the array under one of `list_keys`, or JSON lines (mongoexport's default)."""
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        records = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as error:
                    raise ImportFormatError(f"{path.name}, line {number}: not JSON ({error.msg})") from error
        return records
    if isinstance(data, dict):
        for key in list_keys:
            if isinstance(data.get(key), list):
                return data[key]
        return [data]
    if not isinstance(data, list):
        raise ImportFormatError(f"{path.name}: expected a JSON array, an object or JSON lines")
    return data


def require_file(path: Path) -> Path:
    if not path.is_file():
        raise ImportFormatError(f"{path} is not a file")
    return path


def require_directory(path: Path) -> Path:
    if not path.is_dir():
        raise ImportFormatError(f"{path} is not a folder")
    return path
