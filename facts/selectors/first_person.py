"""Short first-person questions ("How tall am I?", "what's my job", "do I have a dog") share few words with the
facts that answer them, which are stored in the third person ("The user is 1.80 m tall", "The user works as a
nurse"). Such a question is rewritten in the third person for the vector signal, its content words are widened
with a few related words for the full-text signal (OR-ed), and the user's own facts get a boost in the fusion."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.conf import settings

_FIRST_PERSON = re.compile(r"\b(i|i'm|im|i've|i'd|me|my|mine|myself)\b", re.I)
# Longest first, so "am I" is rewritten before "I".
_REWRITES = [
    (re.compile(r"\bam i\b", re.I), "is the user"),
    (re.compile(r"\bdo i\b", re.I), "does the user"),
    (re.compile(r"\bdid i\b", re.I), "did the user"),
    (re.compile(r"\bhave i\b", re.I), "has the user"),
    (re.compile(r"\bwas i\b", re.I), "was the user"),
    (re.compile(r"\b(i am|i'm|im)\b", re.I), "the user is"),
    (re.compile(r"\b(i have|i've)\b", re.I), "the user has"),
    (re.compile(r"\bmy\b", re.I), "the user's"),
    (re.compile(r"\b(me|myself|mine)\b", re.I), "the user"),
    (re.compile(r"\bi\b", re.I), "the user"),
]
# Words a question uses for an attribute and the words facts state it with.
RELATED_WORDS = {
    "job": ["work", "works", "job", "occupation", "profession", "employer", "employed"],
    "work": ["work", "works", "job", "occupation", "employer"],
    "tall": ["tall", "height", "cm", "meters", "feet"],
    "old": ["age", "old", "born", "birthday", "years"],
    "age": ["age", "old", "born", "birthday", "years"],
    "birthday": ["birthday", "born", "birth"],
    "live": ["live", "lives", "living", "home", "city", "moved"],
    "home": ["home", "live", "lives", "house", "city"],
    "name": ["name", "called", "named"],
    "pet": ["pet", "dog", "cat", "puppy", "kitten"],
    "dog": ["dog", "puppy", "pet"],
    "cat": ["cat", "kitten", "pet"],
    "married": ["married", "wife", "husband", "partner", "spouse"],
    "partner": ["partner", "wife", "husband", "girlfriend", "boyfriend", "spouse"],
    "kids": ["kids", "children", "son", "daughter", "child"],
    "children": ["children", "kids", "son", "daughter", "child"],
    "allergic": ["allergic", "allergy", "allergies"],
    "like": ["like", "likes", "love", "loves", "enjoy", "enjoys", "favorite", "prefers"],
    "favorite": ["favorite", "favourite", "likes", "loves", "prefers"],
    "study": ["study", "studies", "studying", "student", "university", "degree"],
    "speak": ["speak", "speaks", "language", "languages"],
}
_WORD = re.compile(r"[a-z][a-z'-]+")
_QUESTION_WORDS = frozenset(
    [
        "what",
        "what's",
        "whats",
        "who",
        "where",
        "when",
        "how",
        "which",
        "why",
        "do",
        "does",
        "did",
        "is",
        "are",
        "was",
        "were",
        "am",
        "have",
        "has",
        "had",
        "can",
        "could",
        "should",
        "would",
        "will",
        "the",
        "a",
        "an",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "about",
        "and",
        "or",
        "is",
        "it",
        "that",
        "this",
        "there",
    ]
)


@dataclass(frozen=True)
class FirstPersonQuery:
    vector_query: str
    text_query: str


def first_person_query(query: str) -> FirstPersonQuery | None:
    """The rewritten query when it is a short first-person question, else None (the query is used as it is)."""
    if not settings.FIRST_PERSON_QUERY_EXPANSION or len(query) > settings.FIRST_PERSON_QUERY_MAX_CHARS:
        return None
    if not _FIRST_PERSON.search(query):
        return None
    rewritten = query
    for pattern, replacement in _REWRITES:
        rewritten = pattern.sub(replacement, rewritten)
    words = [w for w in _WORD.findall(query.lower()) if w not in _QUESTION_WORDS and not _FIRST_PERSON.fullmatch(w)]
    terms: list[str] = []
    for word in words:
        for term in RELATED_WORDS.get(word, [word]):
            if term not in terms:
                terms.append(term)
    text_query = " or ".join(terms) if terms else rewritten
    return FirstPersonQuery(vector_query=rewritten, text_query=text_query)
