"""What a question says about time in the world, read by fact search (no LLM on the request path): whether it asks
about the present ("Where does Gene work?", "Is she still in Denver?", "What does he do now?"), so that statements
that hold now outrank those that ended."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Words that put a question in the present whatever its verb.
_NOW = re.compile(
    r"\b(now|currently|current|these days|nowadays|at the moment|at present|right now|today|still|anymore|any more)\b",
    re.IGNORECASE,
)
# Words that put it in the past, or at a time: such a question is about then, not now.
_THEN = re.compile(
    r"\b(did|was|were|had|used to|before|after|ago|last|previous|previously|former|formerly|ever|when|until|since|"
    r"first|originally|once)\b|\b(1[89]|20)\d\d\b",
    re.IGNORECASE,
)
# A question whose verb is in the present: "Where does ...", "Who is ...", "What are ...", "Does ... have ...".
_PRESENT_VERB = re.compile(r"^\s*(?:\w+\s+){0,2}?(does|do|is|are|am|has|have)\b|'s\b", re.IGNORECASE)


_YEAR = re.compile(r"\b(1[89]|20)\d\d\b")


def names_a_year(query: str) -> bool:
    """Whether the question dates what it asks about with a year ("in 2019", "in May 2023")."""
    return _YEAR.search(query) is not None


def asks_about_the_present(query: str) -> bool:
    """A present-tense question, or one that says now: what holds now answers it."""
    if _NOW.search(query):
        return True
    if _THEN.search(query):
        return False
    return bool(_PRESENT_VERB.search(query))


# "before she moved to Austin", "after joining Wise", "before Alex": the clause a question's time hangs on.
_RELATIVE = re.compile(r"\b(before|after)\s+(?P<clause>[^?.!,;]+)", re.IGNORECASE)
# The words of an anchor that say nothing of which statement it is (pronouns, verbs of change).
_ANCHOR_FILLER = (
    "a an the he she they i you we it his her their my your our its him them me us own to of in at on for from with "
    "and or did do does was were is are be been being had has have got get that this then there moved moving move "
    "became become becoming joined joining join started starting start switched switching switch opening opened "
    "left leaving leave went going go took taking take out right just soon when since"
)
_ANCHOR_STOPWORDS = frozenset(_ANCHOR_FILLER.split())
_ANCHOR_WORD = re.compile(r"[\w\u00c0-\u024f'-]+")
ANCHOR_STEM_LENGTH = 5


@dataclass(frozen=True)
class RelativeAnchor:
    """What a question's "before X" or "after X" hangs on: X's names (capitalised words) and the stems of its other
    content words, by which the statement of X is found among the candidates."""

    before: bool
    names: tuple[str, ...]
    stems: tuple[str, ...]


def relative_anchor(query: str) -> RelativeAnchor | None:
    """The anchor of a question asking what held before or after something it names rather than dates ("Where did
    she live before Austin?"); None when it names none. A date ("before 2020") is a period, read elsewhere."""
    match = _RELATIVE.search(query)
    if match is None:
        return None
    words = [w.strip("'-") for w in _ANCHOR_WORD.findall(match["clause"])]
    words = [w for w in words if w and w.lower() not in _ANCHOR_STOPWORDS and not w.isdigit()]
    if not words:
        return None
    names = tuple(w.lower() for w in words if w[0].isupper())
    stems = tuple(w.lower()[:ANCHOR_STEM_LENGTH] for w in words if not w[0].isupper() and len(w) >= 3)
    return RelativeAnchor(before=match[1].lower() == "before", names=names, stems=stems)


def anchor_names_the_statement(anchor: RelativeAnchor, content: str) -> bool:
    """Whether `content` states the anchor: every name it gives, else at least half of its other words."""
    words = {w.strip("'-").lower() for w in _ANCHOR_WORD.findall(content)}
    words |= {w[:-2] for w in words if w.endswith("'s")}
    if anchor.names:
        return all(name in words for name in anchor.names)
    if not anchor.stems:
        return False
    found = sum(1 for stem in anchor.stems if any(word.startswith(stem) for word in words))
    return found * 2 >= len(anchor.stems)
