"""The junk audit's labelled set (tests/fixtures/fact_audit/): the facts to label, and how facts formed from LoCoMo are
kept without LoCoMo's text (docs/decisions/0062-labels-of-locomo-facts-without-its-text.md).

    .venv/bin/python -m benchmarks.fact_audit_labels candidates --source written   # the chats written for the set
    .venv/bin/python -m benchmarks.fact_audit_labels candidates --source locomo --split dev

writes every statement the offline provider makes of each conversation, before its grammar and reference checks
drop any (what a rule-based extractor without them would store), as JSON lines under .data/benchmarks/, each with
what the checks say of it, for a reader to label. A LoCoMo fact is kept in the fixture as a pointer: the turn it was
formed from (sample id and dia_id), a template that rebuilds its text from that turn's words ("{S} {4} {5+s} {9}."),
and the SHA-256 of its text; `locomo_fact_text` rebuilds it where the data is present."""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from collections.abc import Iterator
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent
WRITTEN = REPO_DIR / "tests" / "fixtures" / "fact_audit" / "conversations.json"
CANDIDATES_DIR = REPO_DIR / ".data" / "benchmarks"

# The words a template may hold as written: those the offline extractor puts in a statement of its own (the speaker's
# name is {S}); every other word is a pointer into the turn, so no word of LoCoMo's is in the fixture.
TEMPLATE_WORDS = frozenset(
    """the The user user's s said and others is are was were has have had does do did would will can could not
    their them themself theirs themselves they going to want got used be been being a an of in at as for from on
    with lives live works work plans plan years old name used ca wo""".split()  # noqa: SIM905
)
_WORD = re.compile(r"[A-Za-z0-9]+")
_PLACEHOLDER = re.compile(r"\{(S|\d+)(?::(cap|low))?(?:\+(s|es|ies))?\}")


def fact_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _inflected(word: str, source: str) -> str | None:
    """The suffix that turns a word of the turn into the fact's ("love" -> "loves": "s"), or None."""
    lower, base = word.lower(), source.lower()
    if len(base) < 3 or word[:1] != source[:1]:
        return None
    for suffix in ("s", "es"):
        if lower == base + suffix:
            return suffix
    if base.endswith("y") and lower == base[:-1] + "ies":
        return "ies"
    return None


def locomo_template(fact: str, *, turn: str, speaker: str) -> str | None:
    """The fact as a template over the turn's words: each word the turn holds becomes {index} (":cap" or ":low" when
    its case changed, "+s" when the verb was made to agree), the speaker {S}; None when a word is neither in the
    turn nor one of TEMPLATE_WORDS (its text could not be rebuilt without writing LoCoMo's)."""
    words = _WORD.findall(turn)
    lowered = [word.lower() for word in words]
    parts: list[str] = []
    position = 0
    for match in _WORD.finditer(fact):
        parts.append(fact[position : match.start()].replace("{", "{{").replace("}", "}}"))
        position = match.end()
        word = match.group(0)
        if word == speaker:
            parts.append("{S}")
        elif word in words:
            parts.append(f"{{{words.index(word)}}}")
        elif word in TEMPLATE_WORDS:
            parts.append(word)
        elif word.lower() in lowered:
            index = lowered.index(word.lower())
            parts.append(f"{{{index}:{'cap' if word[:1].isupper() else 'low'}}}")
        elif (found := next((i for i, w in enumerate(words) if _inflected(word, w)), None)) is not None:
            parts.append(f"{{{found}+{_inflected(word, words[found])}}}")
        else:
            return None
    parts.append(fact[position:].replace("{", "{{").replace("}", "}}"))
    template = "".join(parts)
    return template if locomo_text(template, turn=turn, speaker=speaker) == fact else None


def locomo_text(template: str, *, turn: str, speaker: str) -> str:
    """The text a template rebuilds from its turn."""
    words = _WORD.findall(turn)

    def word(match: re.Match) -> str:
        index, case, suffix = match.groups()
        text = speaker if index == "S" else words[int(index)]
        if case == "cap":
            text = text[:1].upper() + text[1:]
        elif case == "low":
            text = text.lower()
        if suffix == "ies":
            return text[:-1] + "ies"
        return text + (suffix or "")

    return _PLACEHOLDER.sub(word, template).replace("{{", "{").replace("}}", "}")


def locomo_labelled_facts(rows: list[dict], *, locomo: Path | None = None) -> list[dict] | None:
    """The fixture's LoCoMo rows with their text rebuilt from the data ("fact"), None when the data is absent. A row
    whose rebuilt text does not hash to its SHA-256 raises: the data or the template changed."""
    from benchmarks.lib.locomo_data import DEFAULT_LOCOMO, load_conversations

    path = locomo or DEFAULT_LOCOMO
    if not path.exists():
        return None
    samples = sorted({row["sample_id"] for row in rows})
    turns = {(c.sample_id, t.dia_id): t for c in load_conversations(path, sample_ids=samples) for t in c.turns}
    rebuilt = []
    for row in rows:
        turn = turns[(row["sample_id"], row["dia_id"])]
        text = locomo_text(row["template"], turn=turn.text, speaker=turn.speaker)
        if fact_hash(text) != row["sha256"]:
            raise ValueError(f"{row['sample_id']} {row['dia_id']}: {row['template']!r} no longer rebuilds its fact")
        rebuilt.append(row | {"fact": text})
    return rebuilt


def template_words_only(template: str) -> bool:
    """True when every word a template holds as written is one of TEMPLATE_WORDS (the fixture's test checks it)."""
    return all(word in TEMPLATE_WORDS for word in _WORD.findall(_PLACEHOLDER.sub(" ", template)))


def _sessions_written() -> Iterator[tuple[str, list[dict]]]:
    for conversation in json.loads(WRITTEN.read_text(encoding="utf-8"))["conversations"]:
        messages = [
            {"number": number, "role": "user", "text": f"{speaker}: {text}", "date": conversation["date"], "id": ""}
            for number, (speaker, text) in enumerate(conversation["turns"], start=1)
        ]
        yield conversation["id"], messages


def _sessions_locomo(split: str) -> Iterator[tuple[str, list[dict]]]:
    from benchmarks.lib.locomo_data import DEFAULT_LOCOMO, SPLITS, load_conversations

    for conversation in load_conversations(DEFAULT_LOCOMO, sample_ids=list(SPLITS[split])):
        for number in sorted({turn.session for turn in conversation.turns}):
            turns = [turn for turn in conversation.turns if turn.session == number]
            day = turns[0].date
            messages = [
                {"number": position, "role": "user", "text": f"{turn.speaker}: {turn.text}", "date": day}
                | {"id": turn.dia_id, "speaker": turn.speaker, "turn": turn.text}
                for position, turn in enumerate(turns, start=1)
            ]
            yield f"{conversation.sample_id}-s{number}", messages


def statements_made(messages: list[dict]) -> list[dict]:
    """Every statement the offline provider makes of the messages, each with the message it came from and whether its
    checks kept it (`formed`); the checks' findings on it (`defects`)."""
    from core.llm.base import LLMRequest
    from facts.grammar.defects import facts_defects
    from formation.offline import provider as offline

    considered: list[str] = []
    sound = offline.sound_statements

    def recording(statements: list[list[str]], **kwargs) -> list[str]:
        considered.extend(text for alternatives in statements for text in alternatives)
        return sound(statements, **kwargs)

    offline.sound_statements = recording  # type: ignore[assignment]
    try:
        inputs = {"messages": messages, "max_words": 30}
        reply = json.loads(
            offline.OfflineLLM().complete(LLMRequest(purpose="extract_facts", messages=[], inputs=inputs)).text
        )
    finally:
        offline.sound_statements = sound  # type: ignore[assignment]
    formed = {fact["content"]: fact["source"][0] for fact in reply["facts"]}
    texts = list(dict.fromkeys([*formed, *considered]))
    rows = []
    for text, defects in zip(texts, facts_defects(texts), strict=True):
        rows.append({"fact": text, "formed": text in formed, "defects": defects, "source": formed.get(text)})
    return rows


def _source_of(text: str, messages: list[dict]) -> dict | None:
    """The message a statement not kept came from: the one most of its words are in."""
    words = set(_WORD.findall(text.lower()))
    return max(messages, key=lambda m: len(words & set(_WORD.findall(m["text"].lower()))), default=None)


def candidates(source: str, split: str) -> list[dict]:
    sessions = _sessions_written() if source == "written" else _sessions_locomo(split)
    rows = []
    for session, messages in sessions:
        by_number = {message["number"]: message for message in messages}
        for row in statements_made(messages):
            message = by_number.get(row["source"]) or _source_of(row["fact"], messages)
            if message is None:
                continue
            row |= {"session": session, "dia_id": message["id"]}
            if source == "locomo":
                template = locomo_template(row["fact"], turn=message["turn"], speaker=message["speaker"])
                row |= {"template": template, "sha256": fact_hash(row["fact"])}
            rows.append(row)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    made = sub.add_parser("candidates", help="every statement the offline provider makes, to label")
    made.add_argument("--source", choices=("written", "locomo"), default="written")
    made.add_argument("--split", default="dev")
    made.add_argument("--seed", type=int, default=38)
    args = parser.parse_args()
    import django

    django.setup()
    rows = candidates(args.source, args.split)
    random.Random(args.seed).shuffle(rows)
    CANDIDATES_DIR.mkdir(parents=True, exist_ok=True)
    name = f"fact_audit_candidates_{args.source}{'_' + args.split if args.source == 'locomo' else ''}.jsonl"
    path = CANDIDATES_DIR / name
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    print(f"{len(rows)} statements ({sum(row['formed'] for row in rows)} formed) written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
