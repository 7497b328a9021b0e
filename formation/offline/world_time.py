"""When the offline extractor's facts held in the world (provider.py): each fact's own clause read by
facts.grammar.world_time_phrases against the day its message was said, and written into the reply as an LLM writes
it ("held_from", "held_until": facts/prompts/extract_facts.txt). Before the clauses are read, a sentence in the
negative about what is over ("I no longer work at Globex", "I don't live in Boston anymore") is said again in the
past ("I used to work at Globex"): memory keeps what held, ended, rather than a statement of what does not."""

from __future__ import annotations

import re
from datetime import date, datetime

from facts.grammar.world_time_phrases import world_time_said
from facts.world_time import UNKNOWN_WORLD_TIME, TimePrecision, WorldTime, world_time_format

# "I no longer work at ...", "I'm no longer a ...", "I don't live in ... anymore", "I'm not a ... anymore".
_NO_LONGER = re.compile(r"\b(?P<subject>i|I)(?P<be>'m| am)? no longer (?P<rest>[^.!?;]+)")
_NOT_ANYMORE = re.compile(
    r"\b(?P<subject>i|I)(?:(?P<be>'m| am) not|(?: do not| don't| dont)) (?P<rest>[^.!?;]+?)\s*,?\s*any ?more\b"
)
# Where a fact's own words end on either side of what a pattern matched: the clause it belongs to.
_BEFORE_BOUNDARY = re.compile(r"[,;:]|\b(?:but|and|so|because|while|although)\b", re.I)
_AFTER_BOUNDARY = re.compile(r"[,;:.!?]|\s(?:but|and|so|because|while|although)\s", re.I)


def said_day(message: dict) -> date | None:
    """The day a message of the extraction's inputs was said ("2026-11-23 10:00"), None when it has no date."""
    try:
        return datetime.strptime(str(message.get("date", ""))[:10], "%Y-%m-%d").date()
    except ValueError:
        return None


def said_in_the_past(text: str) -> str:
    """The text with its first-person "no longer" and "not ... anymore" clauses said with "used to"."""
    if "longer" not in text and "more" not in text:
        return text

    def past(match: re.Match) -> str:
        rest = match["rest"]
        return f"{match['subject']} used to {'be ' if match['be'] else ''}{rest}"

    return _NOT_ANYMORE.sub(past, _NO_LONGER.sub(past, text))


def clause_around(clause: str, start: int, end: int) -> str:
    """The words of `clause` a pattern's match from `start` to `end` belongs to: back to the last comma or
    conjunction before it and on to the first after it (a time said before "I" or after the object is its)."""
    before = _BEFORE_BOUNDARY.split(clause[:start])[-1]
    after = _AFTER_BOUNDARY.split(clause[end:], maxsplit=1)[0]
    return before + clause[start:end] + after


def world_time_of(words: str, *, said: date | None) -> WorldTime:
    return world_time_said(words, said_on=said) if said is not None and words else UNKNOWN_WORLD_TIME


def move_world_times(move: WorldTime) -> tuple[WorldTime, WorldTime]:
    """ "I moved from Boston to Denver last year": the home left ended where the move began, the new one began there
    (the time of the move unknown: the old one ended, when unknown)."""
    if move.start is None:
        return WorldTime(end_precision=TimePrecision.UNKNOWN), UNKNOWN_WORLD_TIME
    left = WorldTime(end=move.start, end_precision=move.start_precision)
    return left, WorldTime(start=move.start, start_precision=move.start_precision)


def world_time_fields(world_time: WorldTime) -> dict[str, str]:
    """A fact's "held_from" and "held_until" as the extraction reply carries them; none when unknown."""
    fields = {
        "held_from": world_time_format(world_time.start, world_time.start_precision),
        "held_until": world_time_format(world_time.end, world_time.end_precision),
    }
    return {name: value for name, value in fields.items() if value}


def world_time_fields_of(fact: dict) -> dict[str, str]:
    return {name: fact[name] for name in ("held_from", "held_until") if fact.get(name)}
