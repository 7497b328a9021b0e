"""Single-valued slots: what a statement says of someone that has one value at a time (where they work, their job,
where they live, their partner, their relationship status, their manager, a pet's owner), so that a new value ends
the old one in the world (facts.services.reconciliation). Everything else is many-valued (hobbies, likes, friends,
pets owned, places visited): a new value ends nothing. And the question side: the topic a question about the user
asks for (`question_topic`), answered by a slot's statements or by those filed under its categories.

Read from what the entity graph gives a statement (facts.grammar.graph for the offline extractor and the facts
written through the API; the LLM's own relations otherwise): its subject, its predicate in snake_case ("works_at",
"lives_in", "wife_of") and its object; and from a fact's profile key (employer, home_city, partner_name ...)."""

from __future__ import annotations

import re
from dataclasses import dataclass

USER = "user"  # the subject of what is said of the user
EMPLOYER, JOB, HOME, PARTNER, RELATIONSHIP, OWNER, MANAGER = (
    "employer",
    "job_title",
    "home",
    "partner",
    "relationship_status",
    "owner",
    "manager",
)
# Verb stems and the prepositions after them that make a slot's predicate, whatever the verb's form ("works_at",
# "worked_at", "working_at"): regular expressions Python and PostgreSQL read alike (SLOT_PREDICATES).
_PREDICATES: list[tuple[str, str]] = [
    (r"(?:work|employ|employed|job|employee)(?:s|ed|ing)?_(?:at|for|by|of)", EMPLOYER),
    (r"(?:work|employ|employed)(?:s|ed|ing)?_as|(?:job_title|occupation|profession)(?:_is)?", JOB),
    (r"(?:liv|resid|based|settl|stay)(?:e|es|ed|ing|s)?_in|(?:moved|relocated)_to", HOME),
    (r"(?:married|engaged|wed)_to|dating|dates|in_a_relationship_with|seeing", PARTNER),
    (r"owned_by|belongs_to|belong_to", OWNER),
]
# "Maria is the user's wife": (Maria, wife_of, user) is the user's partner slot, its value Maria.
_PARTNER_ROLES = r"(?:wife|husband|partner|spouse|boyfriend|girlfriend|fiance|fiancee)_of"
# A beginning whose object is an organisation is a new employer ("started_at Initech", "joined Initech").
_JOINS = r"start(?:s|ed)?_(?:at|with)|join(?:s|ed)?|hired_by"
# Words a predicate may carry before its verb that do not change the slot ("now_works_at", "used_to_work_at": a
# statement in the past names the slot too; whether it still holds is its world time's to say).
_PREFIX = r"(?:(?:now|currently|still|also|just|recently|used_to)_)?"
_SLOT_OF = [(re.compile(rf"^{_PREFIX}(?:{pattern})$"), name) for pattern, name in _PREDICATES]
_PARTNER_ROLE = re.compile(rf"^{_PREFIX}(?:{_PARTNER_ROLES})$")
# "Rohan is the user's manager": (Rohan, manager_of, user) is the user's manager slot, its value Rohan.
_MANAGER_ROLES = r"(?:manager|boss|supervisor|line_manager)_of"
_MANAGER_ROLE = re.compile(rf"^{_PREFIX}(?:{_MANAGER_ROLES})$")
_JOIN = re.compile(rf"^{_PREFIX}(?:{_JOINS})$")
# Every predicate that may fill a slot, for the database to pick a user's relations by (a POSIX regular expression).
SLOT_PREDICATES = (
    rf"^{_PREFIX}(?:{'|'.join(pattern for pattern, _ in _PREDICATES)}|{_PARTNER_ROLES}|{_MANAGER_ROLES}|{_JOINS})$"
)
KEY_SLOTS = {
    "employer": EMPLOYER,
    "company": EMPLOYER,
    "workplace": EMPLOYER,
    "job_title": JOB,
    "job": JOB,
    "occupation": JOB,
    "profession": JOB,
    "home_city": HOME,
    "current_city": HOME,
    "city": HOME,
    "home": HOME,
    "residence": HOME,
    "location": HOME,
    "partner_name": PARTNER,
    "partner": PARTNER,
    "spouse": PARTNER,
    "spouse_name": PARTNER,
    "relationship_status": RELATIONSHIP,
}
_ARTICLES = re.compile(r"^(?:a|an|the|new|my|their|his|her)\s+")


@dataclass(frozen=True)
class Slot:
    """Someone's (`subject`: "user" for the user, else a lower-cased name) single-valued attribute `name`, holding
    `value` (lower-cased, without its article; "" when only a profile key says the slot, not its value)."""

    subject: str
    name: str
    value: str

    def same_slot(self, other: Slot) -> bool:
        return self.subject == other.subject and self.name == other.name

    def other_value(self, other: Slot) -> bool:
        """A different value of the same slot (an unknown value is not known to differ)."""
        return self.same_slot(other) and bool(self.value) and bool(other.value) and self.value != other.value


def said_of(*, content: str, subject: str) -> bool:
    """Whether a statement is said of `subject` (USER, or a lower-cased name): it begins with them."""
    text = content.strip().lower()
    if subject == USER:
        return text.startswith(("the user ", "the user's "))
    return bool(subject) and text.startswith((f"{subject} ", f"{subject}'s ", f"{subject}’s "))


def slot_value(text: str) -> str:
    value = " ".join(text.lower().split())
    while _ARTICLES.match(value):
        value = _ARTICLES.sub("", value, count=1)
    return value


def relation_slot(*, subject: str, predicate: str, target: str, target_is_organisation: bool = False) -> Slot | None:
    """The slot a relation fills (subject and target as lower-cased names, "user" for the user), or None for a
    many-valued one."""
    if not target:
        return None
    if _PARTNER_ROLE.match(predicate):
        return Slot(subject=target, name=PARTNER, value=slot_value(subject))
    if _MANAGER_ROLE.match(predicate):
        return Slot(subject=target, name=MANAGER, value=slot_value(subject))
    if _JOIN.match(predicate):
        return Slot(subject=subject, name=EMPLOYER, value=slot_value(target)) if target_is_organisation else None
    for pattern, name in _SLOT_OF:
        if pattern.match(predicate):
            return Slot(subject=subject, name=name, value=slot_value(target))
    return None


def key_slot(key: str) -> str | None:
    """The slot a profile key names, None for a key that is not one of the slots' (name, age, birthday ...: the key
    alone keeps them single-valued)."""
    return KEY_SLOTS.get(key)


@dataclass(frozen=True)
class QuestionTopic:
    """What a question about the user asks for: the single-valued slots that answer it (none for a topic without
    one), the categories whose statements about the user do, and, when a category holds more than the topic, the
    words such a statement has (`statement_words`)."""

    slots: frozenset[str]
    categories: tuple[str, ...]
    statement_words: re.Pattern[str] | None = None
    values_not: tuple[str, ...] = ()  # values of the categories that do not answer it (studies, for a job)

    @property
    def name(self) -> str:
        """What a hit answering it says in its reasons ("topic:<name>"): its first category, else its slot."""
        return self.categories[0] if self.categories else min(self.slots)

    def filed_under(self, *, content: str, category: str, value: str) -> bool:
        """Whether a statement about the user, filed under `category` with `value`, is of the topic."""
        if category not in self.categories or value in self.values_not:
            return False
        return self.statement_words is None or bool(self.statement_words.search(content))


def about_someone_who_was(content: str) -> bool:
    """A statement about someone who was ("The user's ex-boyfriend Ryan ...", "The user's former boss ..."): no answer
    to what holds for the user now, whatever slot or category it names."""
    return bool(_FORMER.search(content))


_FORMER = re.compile(r"\b(?:ex-\w+|former|late)\b", re.IGNORECASE)


# The words by which a question about the user asks for one topic of theirs: a single-valued slot ("Where does the
# user work now?", "Which city does she live in?", "Who is the user's partner?") or a topic without one ("What pets
# does the user have?", "What does the user drink these days?"), and what answers it. Work is one family: a question
# about the job and one about the employer are answered by the same statements as often as not ("The user is a nurse
# at São João").
_QUESTION_TOPICS: list[tuple[re.Pattern[str], QuestionTopic]] = [
    (
        re.compile(
            # Not when work is only the time of something else: "Where did the user go after work?"
            r"\b(?<!after )(?<!before )(?<!from )(?<!to )(work|works|working|worked|job|jobs|employer|employed|employs|"
            r"company|firm|role|profession|occupation|position|title|career|for a living|fly for|flies for)\b(?! out)",
            re.IGNORECASE,
        ),
        # Work is also what someone studies (a class, a course): no answer to what they do for a living.
        QuestionTopic(frozenset([EMPLOYER, JOB]), ("work",), values_not=("studies",)),
    ),
    (
        re.compile(
            # Not coming home: "When did the user get home?"
            r"\b(live|lives|(?<!for a )living|lived|(?<!get )(?<!got )(?<!go )(?<!went )(?<!come )(?<!came )(?<!back )"
            r"(?<!drove )(?<!walked )home|city|town|neighbou?rhood|country|reside|resides|based|stationed|moved)\b",
            re.IGNORECASE,
        ),
        # Places are also where someone travelled: a home question is answered by statements of living somewhere.
        QuestionTopic(
            frozenset([HOME]),
            ("places",),
            re.compile(
                r"\b(live|lives|living|lived|moved|moving|home|house|flat|apartment|rents?|neighbou?rhood)\b", re.I
            ),
        ),
    ),
    (
        re.compile(
            r"\b(partner|partners|dating|date|dated|boyfriend|girlfriend|husband|wife|spouse|married|engaged|"
            r"fianc[eé]e?|seeing)\b",
            re.IGNORECASE,
        ),
        # Relationships are also family and friends: a partner question is answered by statements of a partner.
        QuestionTopic(
            frozenset([PARTNER, RELATIONSHIP]),
            ("relationships",),
            re.compile(
                r"\b(partner|dating|dates|boyfriend|girlfriend|husband|wife|spouse|married|engaged|fianc[eé]e?|"
                r"seeing|relationship|together)\b",
                re.I,
            ),
        ),
    ),
    (
        # Who someone reports to is a slot of its own: "Rohan is the user's manager" says nothing of the user's job.
        re.compile(r"\b(manager|boss|supervisor|reports? to)\b", re.IGNORECASE),
        QuestionTopic(frozenset([MANAGER]), ()),
    ),
    (
        re.compile(r"\b(pets?|dogs?|cats?|pupp(?:y|ies)|kittens?|parrots?|horses?|car|cars)\b", re.I),
        QuestionTopic(frozenset(), ("possessions",)),
    ),
    (
        # What someone eats or drinks as a habit, not at one meal: "What did the user eat at the wedding?" is no diet.
        re.compile(
            r"\b(diet|vegan|vegetarian|eats|drinks|(?:does|do)\s+(?:\w+\s+){1,3}?(?:eat|drink))\b", re.IGNORECASE
        ),
        QuestionTopic(frozenset(), ("likes", "dislikes", "health")),
    ),
    (
        re.compile(r"\b(sports?|hobby|hobbies|exercise|exercises|workouts?)\b", re.IGNORECASE),
        QuestionTopic(frozenset(), ("activities",)),
    ),
    (
        re.compile(
            r"\b(smoke|smokes|smoking|health|illness|condition|allerg(?:y|ic|ies)|injury|injured|pregnant|surgery)\b",
            re.IGNORECASE,
        ),
        QuestionTopic(frozenset(), ("health",)),
    ),
]


_ABOUT_THE_USER = re.compile(r"\bthe user\b", re.IGNORECASE)


def question_topic(query: str) -> QuestionTopic | None:
    """The topic a question about "the user" asks for (a first-person question, or one naming the user, is read so
    first), when it names exactly one; None otherwise."""
    if not _ABOUT_THE_USER.search(query):
        return None
    topics = [topic for pattern, topic in _QUESTION_TOPICS if pattern.search(query)]
    return topics[0] if len(topics) == 1 else None
