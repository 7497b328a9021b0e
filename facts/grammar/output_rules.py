"""Checks of a model's statements against the rules every formation prompt states, shared by the steps that count
their replies' rule violations (LLMCall.rule_violations) and by the audit of formed facts (benchmarks/fact_audit.py).
They look at words only: cheap enough to run on every reply."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
# Words that say nothing about what a statement is about: a restatement is judged on the rest.
_FILLER = frozenset(
    re.findall(
        r"\S+",
        """a an the and or but of in on at to for with from by as is are was were be been being has have had do does
        did it its this that these those they them their he she his her him we our you your i me my user user's users
        assistant agent not no also very about into over after before than then there here who what when where which""",
    )
)
# A bare greeting or acknowledgement, at most followed by a name ("Hi Ana!", "Thanks!", "ok").
_GREETING = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|good (?:morning|evening|night|afternoon)|bye|goodbye|see you|yes|no|ok|okay"
    r"|sure|maybe|great|cool|wow)\b[\s,!.]*(?:[A-Za-z][\w'-]*)?[\s!.]*$",
    re.I,
)
# What a model writes when it turns a turn of the conversation itself into a "fact".
_REPORTED_QUESTION = re.compile(
    r"^(?:the )?(?:user|assistant|speaker)\s+(?:asked|asks|wondered|wonders|wants to know|wanted to know|is asking"
    r"|was asking|inquired|inquires)\b(?! to\b)",  # "asked to be reminded" is a request
    re.I,
)
_REPORTED_GREETING = re.compile(
    r"^(?:the )?(?:user|assistant|speaker)\s+(?:greeted|greets|said (?:hi|hello|goodbye|bye)|thanked|thanks|says hi"
    r"|said hi)\b",
    re.I,
)
# A fact about one user ("The user ...", "The user's sister ...") marked as agent-wide would reach every user.
ABOUT_THE_USER = re.compile(r"\bthe user(?:'s)?\b", re.I)
# How much of a statement's content words must come from a text for the statement to restate it.
RESTATEMENT_SHARE = 0.8
RESTATEMENT_MIN_WORDS = 3


def content_words(text: str) -> set[str]:
    return {word for word in _WORD.findall(text.lower()) if word not in _FILLER}


def word_count(text: str) -> int:
    return len(text.split())


def is_question(text: str) -> bool:
    """A question, or a question reported as a statement ("The user asked about ...")."""
    return text.rstrip().endswith("?") or _REPORTED_QUESTION.match(text.strip()) is not None


def is_greeting(text: str) -> bool:
    """A greeting or acknowledgement, said or reported ("The user greeted the assistant")."""
    text = text.strip()
    return _GREETING.match(text) is not None or _REPORTED_GREETING.match(text) is not None


def normalised(text: str) -> str:
    return " ".join(text.lower().split()).strip(" .")


def copies(*, statement: str, text: str) -> bool:
    """Whether the statement is a verbatim piece of the text: a prompt's example or placeholder, copied."""
    return bool(normalised(statement)) and normalised(statement) in normalised(text)


# A placeholder in a prompt's reply format ("<the updated note>", "<fact>"): never part of a real reply.
_PLACEHOLDER = re.compile(r"<[a-z][a-z ]{2,40}>")


def holds_a_placeholder(*, statement: str, instructions: str) -> bool:
    return any(placeholder in statement.lower() for placeholder in set(_PLACEHOLDER.findall(instructions)))


def has_words(text: str) -> bool:
    """Whether the text says anything at all ("...", "-" and the like do not)."""
    return _WORD.search(text.lower()) is not None


# A statement most of whose content words are not in its source was not taken from it.
GROUNDED_SHARE = 0.5


def grounded(*, statement: str, source_words: set[str]) -> bool:
    words = content_words(statement)
    return not words or len(words & source_words) >= GROUNDED_SHARE * len(words)


def restates(*, statement: str, source_words: set[str]) -> bool:
    """Whether (almost) every content word of the statement is in the source: nothing new was said."""
    words = content_words(statement)
    if len(words) < RESTATEMENT_MIN_WORDS or not source_words:
        return False
    return len(words & source_words) >= RESTATEMENT_SHARE * len(words)
