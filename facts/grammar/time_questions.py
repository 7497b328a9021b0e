"""What a question says about time in the world, read by fact search (no LLM on the request path): whether it asks
about the present ("Where does Gene work?", "Is she still in Denver?", "What does he do now?"), so that statements
that hold now outrank those that ended."""

from __future__ import annotations

import re

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


def asks_about_the_present(query: str) -> bool:
    """A present-tense question, or one that says now: what holds now answers it."""
    if _NOW.search(query):
        return True
    if _THEN.search(query):
        return False
    return bool(_PRESENT_VERB.search(query))
