"""The development set for time (tests/fixtures/time_devset/, one JSON file per conversation): its conversations,
their dated sessions, the extraction a good LLM would return for each session, and the questions with what a correct
answer contains; and the matching rules the scorer (benchmarks/time_devset.py) applies to what search returns.

Written for this project, not copied from any dataset: for tuning, like LoCoMo's dev split (docs/benchmarks/method.md,
"The development set for time"). The files' shape is in tests/fixtures/time_devset/README.md."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parents[2]
DEFAULT_SET = REPO_DIR / "tests" / "fixtures" / "time_devset"
TYPES = ("current", "held_at", "when", "before_after")
# A when-question's expected date: how precisely the conversation gives it (the precisions of world time but
# "unknown", which no question asks for).
PRECISIONS = ("day", "month", "year", "approximate")
# World-time precisions from the finest to the coarsest that still names a year ("approximate" is a rough guess).
_FINENESS = {"day": 3, "month": 2, "year": 1, "approximate": 0}
APPROXIMATE_DAYS = 366  # an approximate expected date matches a start within a year of it
TOP_K_WHEN = 5
# The held_from / held_until strings of the extraction reply (docs: the contract of world time).
WORLD_TIME_TEXT = re.compile(r"^~?\d{4}(-\d{2}(-\d{2})?)?$")


@dataclass(frozen=True)
class Expected:
    contains: tuple[str, ...]  # every item must appear; "a|b" means either
    excludes: tuple[str, ...]  # no item may appear; "a|b" means neither
    date: date | None = None  # when-questions
    precision: str = ""


@dataclass(frozen=True)
class Question:
    id: str
    conversation: str
    type: str
    text: str
    expected: Expected
    evidence: tuple[str, ...]  # message ids
    at: date | None = None  # the moment a held-at question asks about


@dataclass(frozen=True)
class Message:
    id: str
    role: str
    created_at: str
    content: str


@dataclass(frozen=True)
class Session:
    id: str
    messages: tuple[Message, ...]
    extraction: dict  # the extract_facts reply a good LLM would give (facts, entities, relations)
    reconciliation: tuple[dict, ...]  # {"new": fact number, "action": UPDATE|DELETE, "target": earlier content}


@dataclass(frozen=True)
class Conversation:
    id: str
    user: str
    about: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    @property
    def message_ids(self) -> set[str]:
        return {message.id for session in self.sessions for message in session.messages}


def load_set(folder: Path = DEFAULT_SET, *, only: Iterable[str] = ()) -> list[Conversation]:
    wanted = set(only)
    conversations = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if wanted and data["id"] not in wanted:
            continue
        conversations.append(_conversation(data))
    return conversations


def _conversation(data: dict) -> Conversation:
    sessions = tuple(
        Session(
            id=session["id"],
            messages=tuple(Message(**message) for message in session["messages"]),
            extraction=session["extraction"],
            reconciliation=tuple(session.get("reconciliation", ())),
        )
        for session in data["sessions"]
    )
    questions = []
    for item in data["questions"]:
        expected = item["expected"]
        questions.append(
            Question(
                id=item["id"],
                conversation=data["id"],
                type=item["type"],
                text=item["question"],
                expected=Expected(
                    contains=tuple(expected["contains"]),
                    excludes=tuple(expected.get("excludes", ())),
                    date=date.fromisoformat(expected["date"]) if expected.get("date") else None,
                    precision=expected.get("precision", ""),
                ),
                evidence=tuple(item["evidence"]),
                at=date.fromisoformat(item["at"]) if item.get("at") else None,
            )
        )
    return Conversation(
        id=data["id"], user=data["user"], about=data["about"], sessions=sessions, questions=tuple(questions)
    )


# --- matching -------------------------------------------------------------------------------------------------------


def folded(text: str) -> str:
    """Lower case, accents and curly apostrophes away: "Malmö" matches "Malmo", "Chloé's" matches "chloe's"."""
    text = unicodedata.normalize("NFKD", text.replace("\u2019", "'"))
    return "".join(char for char in text if not unicodedata.combining(char)).lower()


def _mentions(text: str, keyword: str) -> bool:
    """Any of the keyword's alternatives ("a|b") at the start of a word of the text: "teach" matches "teaches" and
    "teacher", "run" does not match "brunch"."""
    folded_text = folded(text)
    return any(
        re.search(r"(?<!\w)" + re.escape(folded(alternative.strip())), folded_text)
        for alternative in keyword.split("|")
        if alternative.strip()
    )


def content_matches(text: str, expected: Expected) -> bool:
    """A hit answers the question when it names everything expected and nothing excluded (the ended value, the other
    period's value), so "The user works at Initech" answers where she works now and "The user works at Initech; she
    used to be at Globex" does not: it cannot be told from the wrong answer by its words."""
    return all(_mentions(text, keyword) for keyword in expected.contains) and not any(
        _mentions(text, keyword) for keyword in expected.excludes
    )


def date_matches(*, start: str | None, start_precision: str, expected: date, precision: str) -> bool:
    """A fact's world-time start gives the expected date at the expected precision: the same day, month or year, no
    coarser than asked ("2023" does not say "May 2023"); an approximate expected date, any start within a year."""
    if not start or start_precision in ("", "unknown"):
        return False
    given = date.fromisoformat(start[:10])
    if precision == "approximate":
        return abs((given - expected).days) <= APPROXIMATE_DAYS
    if _FINENESS.get(start_precision, -1) < _FINENESS[precision]:
        return False
    if precision == "day":
        return given == expected
    if precision == "month":
        return (given.year, given.month) == (expected.year, expected.month)
    return given.year == expected.year


@dataclass(frozen=True)
class FactHit:
    content: str
    world_time: dict | None = None  # as the API gives it, when it does


@dataclass(frozen=True)
class Verdict:
    question: str
    type: str
    correct: bool  # the type's headline measure
    fact_top1: bool  # the top fact hit answers the question
    fact_rank: int | None  # the first fact hit that answers it (1-based), if any
    turn_at_5: bool  # an evidence message among the top 5 turns
    fact_date_at_5: bool  # a fact among the top 5 answers it and its world-time start gives the expected date
    holds_at_top1: bool | None = None  # held-at questions asked with holds_at, when the API has it


def judge(
    question: Question,
    *,
    facts: Sequence[FactHit],
    turns: Sequence[str],
    facts_holds_at: Sequence[FactHit] | None = None,
) -> Verdict:
    """One question's verdict from its fact hits (best first), the ids of its top turn hits (best first) and, for a
    held-at question when the API has holds_at, its fact hits with holds_at."""
    rank = next(
        (place for place, hit in enumerate(facts, start=1) if content_matches(hit.content, question.expected)), None
    )
    turn_at_5 = bool(set(turns[:TOP_K_WHEN]) & set(question.evidence))
    fact_date_at_5 = question.expected.date is not None and any(
        content_matches(hit.content, question.expected)
        and hit.world_time is not None
        and date_matches(
            start=hit.world_time.get("start"),
            start_precision=hit.world_time.get("start_precision") or "",
            expected=question.expected.date,
            precision=question.expected.precision,
        )
        for hit in facts[:TOP_K_WHEN]
    )
    holds_at_top1 = None
    if facts_holds_at is not None:
        holds_at_top1 = bool(facts_holds_at) and content_matches(facts_holds_at[0].content, question.expected)
    correct = (turn_at_5 or fact_date_at_5) if question.type == "when" else rank == 1
    return Verdict(
        question=question.id,
        type=question.type,
        correct=correct,
        fact_top1=rank == 1,
        fact_rank=rank,
        turn_at_5=turn_at_5,
        fact_date_at_5=fact_date_at_5,
        holds_at_top1=holds_at_top1,
    )


def percent(values: Sequence[bool]) -> float | None:
    return round(100 * sum(values) / len(values), 1) if values else None


def scores(verdicts: Sequence[Verdict]) -> dict:
    """Per question type and overall: the headline measure (top-1 for current, held-at and before/after; R@5 for
    when), the held-at top-1 with holds_at, and the diagnostics (turn R@5 for every type, fact top-1, fact R@5)."""
    table: dict[str, dict] = {}
    for name in (*TYPES, "overall"):
        group = [verdict for verdict in verdicts if name in ("overall", verdict.type)]
        with_holds_at = [verdict.holds_at_top1 for verdict in group if verdict.holds_at_top1 is not None]
        table[name] = {
            "questions": len(group),
            "headline": percent([verdict.correct for verdict in group]),
            "holds_at_top1": percent(with_holds_at) if with_holds_at else None,
            "fact_top1": percent([verdict.fact_top1 for verdict in group]),
            "fact_at_5": percent([verdict.fact_rank is not None and verdict.fact_rank <= 5 for verdict in group]),
            "turn_at_5": percent([verdict.turn_at_5 for verdict in group]),
            "fact_date_at_5": percent([verdict.fact_date_at_5 for verdict in group if verdict.type == "when"]),
        }
    return table


# --- the set's own checks -------------------------------------------------------------------------------------------


def world_time_text_valid(value: object) -> bool:
    """A held_from / held_until string of the extraction reply: "YYYY", "YYYY-MM" or "YYYY-MM-DD", "~" first when
    approximate (held_until may also be "ended"), and a real date."""
    if not isinstance(value, str) or not WORLD_TIME_TEXT.match(value):
        return False
    parts = value.lstrip("~").split("-")
    try:
        datetime(int(parts[0]), int(parts[1]) if len(parts) > 1 else 1, int(parts[2]) if len(parts) > 2 else 1)
    except ValueError:
        return False
    return True
