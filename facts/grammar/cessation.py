"""Statements that something stopped: "The user gave up flamenco in 2020.", "The user quit smoking.", "The user left
the band The Static.", "The user and Elena ended their relationship.", "The user's dog Scout died.", "The user can't
watch horror films anymore." Such a statement ends the current statement of the same person that says what stopped
("The user dances flamenco on Tuesdays.") in the world, whatever its slot (facts.services.world_changes): a hobby, a
habit, a membership or a partner is many-valued, so no new value ends it, but a statement that it stopped does.

Read from the statement's words by rules, for the offline extractor's statements and the LLM's alike; what stopped is
kept as the words a statement that says it must hold (`Cessation.words`), matched by the database's full-text search
(its English stemming makes "smoking" match "smokes", "teaching" match "teaches")."""

from __future__ import annotations

import re
from dataclasses import dataclass

from facts.grammar.slots import USER

# A subject: the user or a name, and for a couple's ending the other one ("The user and Elena ...").
_SUBJECT = r"(?P<subject>(?i:the user)|[A-Z][\w'’-]+)(?: and (?P<other>[A-Z][\w'’-]+|(?i:the user)))?"
# Verbs of stopping whose object is what stopped. "left" only for a group or an organisation ("left the band",
# "left SEAT"): "left early" or "left for Paris" end nothing.
_STOPPED = (
    r"(?:has |had )?(?:stopped|quit|quits|gave up|gives up|given up|dropped out of|retired from|sold|"
    r"cancelled|canceled|moved out of|broke up with|split up with|split from|separated from|divorced|"
    r"is no longer|are no longer|was no longer|no longer)"
)
_LEFT = r"(?:has |had )?(?:left|leaves|quit)"
_GROUPS = r"(?:band|team|club|company|firm|job|school|choir|group|church|army|navy|air force|startup|lab|orchestra)"
_COUPLE_ENDED = (
    re.compile(
        rf"^{_SUBJECT} (?:have |had )?(?:ended|called off|broke off|finished) (?:their|the) "
        r"(?:relationship|engagement|marriage|partnership)\b",
        re.IGNORECASE,
    ),
    re.compile(rf"^{_SUBJECT} (?:have |had )?(?:broke up|split up|separated|divorced|got divorced)\b", re.IGNORECASE),
)
_STOPPING = re.compile(rf"^{_SUBJECT} {_STOPPED} (?P<what>.+)$", re.IGNORECASE)
_LEAVING = re.compile(rf"^{_SUBJECT} {_LEFT} (?P<what>(?:the |a |an |his |her |their )?(?:[A-Z].*|{_GROUPS}\b.*))$")
_NOT_ANYMORE = re.compile(
    rf"^{_SUBJECT} (?:does not|doesn't|do not|don't|can't|cannot|can no longer|won't|is not|isn't) "
    r"(?P<what>.+?) (?:anymore|any more)\b",
    re.IGNORECASE,
)
_DIED = re.compile(
    r"^(?:(?i:the user's)|[A-Z][\w'’-]+'s) [\w -]{0,30}?\b(?P<name>[A-Z][\w'’-]+) (?:has )?(?:died|passed away)\b"
)
# Not stopping: "stopped by the bakery", "stopped at a café", "quit worrying".
_NOT_STOPPING = re.compile(r"^(?:by|at|in|over|to|for|worrying|complaining)\b", re.IGNORECASE)
# Where what stopped ends: at a time, a reason or a buyer ("in 2020", "after her surgery", "to his cousin Beto").
_CUT = re.compile(
    r"\s*(?:,|;|\.|\b(?:in|on|at|after|before|because|since|when|last|this|during|until|about|following|due to|"
    r"(?:to|for|with) (?:his|her|their|my) (?:cousin|brother|sister|friend|family|partner|kids|children)|"
    r"to (?:a|an|the) (?:buyer|new owner))\b)",
    re.IGNORECASE,
)
_STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "his",
        "her",
        "their",
        "my",
        "its",
        "our",
        "your",
        "of",
        "with",
        "and",
        "or",
        "to",
        "from",
        "for",
        "by",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "user",
        "anymore",
        "any",
        "more",
        "again",
        "now",
        "all",
        "some",
    ]
)
_WORD = re.compile(r"[^\W\d_][\w'’-]*", re.UNICODE)
_MAX_WORDS = 6


@dataclass(frozen=True)
class Cessation:
    """What a statement says stopped: of whom (`subject`: "user", else a lower-cased name), the words a statement of
    what stopped holds (`words`), and whether it is a couple's ending, matched by the other's name in a statement
    about the relationship only (`relationship`)."""

    subject: str
    words: tuple[str, ...]
    relationship: bool = False


def _subject(match: re.Match[str]) -> str:
    subject = match.group("subject")
    return USER if subject.lower() == "the user" else subject.lower()


def _words(text: str) -> tuple[str, ...]:
    words = [word for word in _WORD.findall(text) if word.lower() not in _STOP_WORDS]
    return tuple(dict.fromkeys(word.lower() for word in words))[:_MAX_WORDS]


def _what(text: str) -> str:
    cut = _CUT.search(text)
    return text[: cut.start()] if cut else text


def cessation_read(content: str) -> Cessation | None:
    """What the statement says stopped, or None when it says nothing stopped."""
    text = content.strip().rstrip(".!")
    couple = _COUPLE_ENDED[0].match(text) or _COUPLE_ENDED[1].match(text)
    if couple is not None:
        other = couple.group("other")
        if other is None:
            return None
        names = {_subject(couple), USER if other.lower() == "the user" else other.lower()}
        partner = sorted(names - {USER}) if USER in names else []
        return Cessation(subject=USER, words=tuple(partner), relationship=True) if partner else None
    died = _DIED.match(text)
    if died is not None:
        return Cessation(subject=USER if text.lower().startswith("the user's") else "", words=(died["name"].lower(),))
    for pattern in (_STOPPING, _LEAVING):
        stopped = pattern.match(text)
        if stopped is not None and stopped.group("other") is None and not _NOT_STOPPING.match(stopped["what"]):
            words = _words(_what(stopped["what"]))
            return Cessation(subject=_subject(stopped), words=words) if words else None
    negated = _NOT_ANYMORE.match(text)
    if negated is not None and negated.group("other") is None:
        # "can't watch horror films anymore": what stopped is the object, whatever the verb ("loves horror films").
        what = _what(negated["what"]).split(maxsplit=1)
        words = _words(what[1] if len(what) > 1 else what[0])
        return Cessation(subject=_subject(negated), words=words) if words else None
    return None
