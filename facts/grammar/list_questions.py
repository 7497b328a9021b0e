"""List questions: a question that asks for everything of a kind about one person ("What activities does Melanie
partake in?", "Which books has she read?", "Where has Jon travelled?", "Who are his friends?", "What does Caroline like
to do?"), read by offline rules over the memory categories (agents.categories), never by an LLM: the request path
stays as fast as the rules (docs/decisions/0058-list-questions.md).

A list question names what it lists (a plural noun after what/which/how many, or a verb of a few known kinds: where
someone has travelled or camped, what they have painted or bought, what they do for fun) and the person it is about:
a name ("Melanie", "Jon's"), several ("Jon and Gina"), or the user ("I", "my"). The kind maps to one or more
categories: activities are also events ("What activities has Melanie done with her family?" is answered by days out as
much as by hobbies), places visited are places and events. A question that asks when, why or how is not a list.

A list question often narrows its kind ("What LGBTQ+ events ...", "activities ... with her family", "What has Melanie
painted?"): its narrowing words are its words besides the asking ones, the generic kind and the person, and a statement
matches one when it shares its stem or the lexicon entry the word belongs to ("family" reaches "kids" and "husband"
through the relationships lexicon's family entry, "painted" reaches "a painting"; facts.grammar.categories)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from agents.categories import DEFAULT_CATEGORY_SLUGS
from facts.grammar.categories import LEXICONS

ACTIVITIES, EVENTS, PLACES, LIKES, DISLIKES, RELATIONSHIPS, POSSESSIONS, HEALTH, PLANS, BELIEFS, WORK, IDENTITY = (
    "activities",
    "events",
    "places",
    "likes",
    "dislikes",
    "relationships",
    "possessions",
    "health",
    "plans",
    "beliefs",
    "work",
    "identity",
)
# The nouns a list question asks for (plural, or a mass noun: a singular noun asks for one thing, "What book is Jon
# reading?"), and the categories they are filed under.
_NOUNS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("activities", "hobbies", "sports", "pastimes", "crafts", "games", "classes", "workouts", "exercises"): (
        ACTIVITIES,
        EVENTS,
    ),
    ("art", "artworks", "paintings", "pottery", "instruments", "music"): (ACTIVITIES, LIKES, POSSESSIONS),
    ("events", "experiences", "trips", "concerts", "festivals", "parades", "conferences", "competitions"): (
        EVENTS,
        ACTIVITIES,
    ),
    ("milestones", "celebrations", "outings", "adventures", "performances", "shows", "vacations", "holidays"): (
        EVENTS,
        ACTIVITIES,
    ),
    ("places", "cities", "countries", "destinations", "locations", "towns"): (PLACES, EVENTS),
    ("books", "novels", "movies", "films", "songs", "bands", "artists", "musicians", "authors"): (LIKES, ACTIVITIES),
    ("foods", "dishes", "meals", "restaurants", "favourites", "favorites", "interests", "genres", "snacks"): (
        LIKES,
        ACTIVITIES,
    ),
    ("dislikes", "fears", "phobias"): (DISLIKES,),
    ("friends", "family", "relatives", "siblings", "children", "kids", "colleagues", "mentors", "people"): (
        RELATIONSHIPS,
    ),
    ("supporters", "partners", "parents"): (RELATIONSHIPS,),
    ("pets", "animals", "dogs", "cats", "items", "possessions", "cars", "belongings", "gifts"): (POSSESSIONS, LIKES),
    ("conditions", "illnesses", "injuries", "allergies", "medications", "symptoms"): (HEALTH,),
    ("plans", "goals", "ambitions", "dreams", "aspirations", "projects"): (PLANS, WORK),
    ("beliefs", "values", "causes", "symbols", "principles"): (BELIEFS,),
    ("jobs", "careers", "skills", "degrees", "courses", "businesses", "roles"): (WORK,),
    ("languages", "nationalities"): (IDENTITY,),
}
NOUN_CATEGORIES = {noun: categories for nouns, categories in _NOUNS.items() for noun in nouns}
# Verbs whose objects a "what has X <verb>" question lists, and those whose places a "where has X <verb>" one lists.
_VERBS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("painted", "drawn", "made", "created", "built", "written", "played", "cooked", "baked", "done", "tried"): (
        ACTIVITIES,
        EVENTS,
    ),
    ("bought", "purchased", "adopted", "collected"): (POSSESSIONS, EVENTS),
    ("read", "watched", "seen", "heard"): (LIKES, ACTIVITIES, EVENTS),
    ("attended", "joined", "participated", "volunteered", "organized", "organised"): (EVENTS, ACTIVITIES),
}
VERB_CATEGORIES = {verb: categories for verbs, categories in _VERBS.items() for verb in verbs}
_PLACE_VERBS = frozenset(
    [
        "visited",
        "travelled",
        "traveled",
        "been",
        "gone",
        "camped",
        "lived",
        "moved",
        "hiked",
        "explored",
        "stayed",
        "vacationed",
    ]
)
# "What does X like to do", "what does X do for fun / to relax / to destress / in her free time".
_LEISURE = re.compile(
    r"\b(?:like|likes|love|loves|enjoy|enjoys)\s+(?:to\s+do|doing)\b|\bdo(?:es)?\s+(?:\w+\s+){0,2}(?:for\s+fun|to\s+"
    r"(?:relax|unwind|de-?stress)|in\s+(?:\w+\s+)?(?:free|spare)\s+time)\b",
    re.I,
)
_NOT_A_LIST = re.compile(r"^\s*(?:when|why|how\s+(?:long|old|did|does|do|is|was|often|far))\b", re.I)
_ASKS = r"(?:what|which|how\s+many|name\s+(?:the|all|some))"
_KIND = r"(?:(?:kinds?|types?|sorts?)\s+of\s+)?"
# "what [kinds of] <noun> ..." (the noun among the next three words: "what LGBTQ+ events", "which musical artists").
_NOUN_ASKED = re.compile(rf"\b{_ASKS}\s+{_KIND}((?:[\w+/-]+\s*){{1,3}})", re.I)
_LIKES_ASKED = re.compile(r"^\s*what\s+do(?:es)?\s+.+\s(?:like|love|enjoy)\s*\??\s*$", re.I)
# "what are X's <noun>", "who are X's <noun>", "what <noun> does X ...".
_POSSESSIVE_NOUN = re.compile(r"\b(?:[A-Z][\w-]+(?:'s|’s)|his|her|their|my)\s+(?:\w+\s+)?([a-z]+)\b")
_WHAT_HAS_VERB = re.compile(r"^\s*(what|where|which\s+\w+)\s+(?:has|have|had)\s+(.+)", re.I)
_WHO = re.compile(r"^\s*who\s+(?:are|is|were|was)\b", re.I)
_WHO_SUPPORTS = re.compile(r"^\s*who\s+(?:\w+\s+)?(?:supports?|helps?|cares?|visits?)\b", re.I)
_NAME = re.compile(r"(?<![\w'’])([A-Z][a-z][\w-]*)(?:'s|’s)?\b")
_FIRST_PERSON = re.compile(r"\b(?:I|my|me|mine)\b")
# Capitalised words a question holds that are not people.
_NOT_NAMES = frozenset(
    [
        "What",
        "Which",
        "Where",
        "Who",
        "Whom",
        "How",
        "When",
        "Why",
        "Name",
        "Did",
        "Does",
        "Do",
        "Has",
        "Have",
        "Is",
        "Are",
        "Was",
        "Were",
        "The",
        "A",
        "An",
        "In",
        "On",
        "At",
        "For",
        "Of",
        "And",
        "Or",
        "LGBTQ",
        "Pride",
    ]
)


# Words of a list question that do not narrow what it lists: asking words, auxiliaries, pronouns, the generic kinds
# (a category's whole content) and the verbs of taking part.
_NOT_NARROWING = frozenset(
    re.findall(
        r"\S+",
        """what which who whom where when how many much kind kinds type types sort sorts of does do did has have had
    is are was were the a an in on to for with and or her his their its my i me he she they them both some all any
    name names activities activity events event things thing hobbies hobby experiences places items partake participated
    participate done make made like likes enjoy enjoys attended been gone visited""",
    )
)
_WORD = re.compile(r"[a-z][a-z0-9]*")


def _stem(word: str) -> str:
    """A word up to its ending: its first five letters ("painted", "painting": "paint"), a short plural without its
    s ("kids": "kid")."""
    return word[:5] if len(word) > 5 else word.removesuffix("s")


@dataclass(frozen=True)
class ListQuestion:
    """What a list question asks for: the categories, in the order to read them, the people it is about (names as
    written; `about_the_user` when it says I or my), and the words that narrow it (module docstring)."""

    categories: tuple[str, ...]
    people: tuple[str, ...] = ()
    about_the_user: bool = False
    narrowing: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """What a hit returned for it says of itself: "list:" and its first category."""
        return f"list:{self.categories[0]}"


def _people(query: str) -> tuple[str, ...]:
    names = [name for name in _NAME.findall(query) if name not in _NOT_NAMES]
    return tuple(dict.fromkeys(names))


def _categories_asked(query: str) -> tuple[str, ...]:
    found: list[str] = []
    for match in _NOUN_ASKED.finditer(query):
        nouns = [word for word in re.findall(r"[a-z]+", match.group(1).lower())[:4] if word in NOUN_CATEGORIES]
        if nouns:
            found += NOUN_CATEGORIES[nouns[0]]
            break
    if not found and (_WHO.match(query) or re.match(r"^\s*what\s+(?:are|were)\b", query, re.I)):
        for match in _POSSESSIVE_NOUN.finditer(query):
            if match.group(1).lower() in NOUN_CATEGORIES:
                found += NOUN_CATEGORIES[match.group(1).lower()]
                break
    if not found and _LEISURE.search(query):
        found += (ACTIVITIES, LIKES)
    if not found and _LIKES_ASKED.match(query):
        found += (LIKES, ACTIVITIES)
    if not found and (asked := _WHAT_HAS_VERB.match(query)):
        words = re.findall(r"[a-z]+", asked.group(2).lower())
        if asked.group(1).lower() == "what":
            verbs = [word for word in words if word in VERB_CATEGORIES]
            found += VERB_CATEGORIES[verbs[0]] if verbs else ()
        elif any(word in _PLACE_VERBS for word in words):
            found += (PLACES, EVENTS)
    if not found and _WHO_SUPPORTS.match(query):
        found.append(RELATIONSHIPS)
    return tuple(dict.fromkeys(found))


def _narrowing(query: str, people: tuple[str, ...]) -> tuple[str, ...]:
    names = {name.lower() for name in people}
    words = _WORD.findall(query.lower().replace("'s", " ").replace("’s", " "))
    return tuple(dict.fromkeys(word for word in words if word not in _NOT_NARROWING and word not in names))


@lru_cache(maxsize=1024)
def _entry_of(word: str) -> re.Pattern[str] | None:
    """The lexicon entry a narrowing word belongs to (its pattern), if any: "family" is the relationships lexicon's
    family entry, "painted" the activities lexicon's painting."""
    for terms in LEXICONS.values():
        for _, pattern in terms:
            if pattern.search(word):
                return pattern
    return None


def narrowing_matched(text: str, narrowing: tuple[str, ...]) -> bool:
    """Whether a statement says something a narrowing word asks for: a word of the same stem, or a term of the lexicon
    entry the word belongs to."""
    if not narrowing:
        return False
    lowered = text.lower()
    stems = {_stem(word) for word in _WORD.findall(lowered)}
    for word in narrowing:
        entry = _entry_of(word)
        if _stem(word) in stems or (entry is not None and entry.search(lowered)):
            return True
    return False


def list_question_read(query: str) -> ListQuestion | None:
    """What the question lists and about whom, or None when it is not a list question."""
    if len(query) > 300 or _NOT_A_LIST.match(query):
        return None
    categories = tuple(slug for slug in _categories_asked(query) if slug in DEFAULT_CATEGORY_SLUGS)
    if not categories:
        return None
    people = _people(query)
    return ListQuestion(
        categories=categories,
        people=people,
        about_the_user=bool(_FIRST_PERSON.search(query)),
        narrowing=_narrowing(query, people),
    )
