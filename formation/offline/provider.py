"""A deterministic, rule-based stand-in for the LLM, used when no LLM is configured, so that `make run` forms
real memory on a machine without an API key. It reads the structured inputs of a request (never the prompt text)
and answers in the same JSON schema the prompts ask a model for.

It is much less capable than a model, and says less rather than guess:
- facts: common first-person statements (name, age, home, origin, job, allergies, plans, likes, possessions, "my X
  is Y") and statements about the people and things the user names ("my sister ... she ..."), one fact per clause:
  a sentence is split where a new subject starts ("... and she visits on Saturday") or where "I" is left out
  ("I live in Porto and work at a bakery"), and he/she/they/it are resolved to the last "my X" they can mean;
- entities and relations: parsed from those facts with spaCy (facts/grammar/graph.py);
- reflections: only what the user explicitly asks of the assistant (language, length, format, what not to do, how
  to be called), goals they state, and reminders they ask for; nothing from word counts or topics;
- consolidation: the current note plus the new reflections, the oldest lines dropped over the word limit; a session
  note also lists the questions the user asked.
docs/formation.md has its measurements on the unit fixtures (tests/fixtures/offline_extractor/)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from core.llm.base import LLMProvider, LLMReply, LLMRequest
from facts.grammar.categories import reply_facts_file
from facts.grammar.graph import graph_of_facts
from facts.grammar.output_rules import content_words
from facts.world_time import UNKNOWN_WORLD_TIME, WorldTime
from formation.offline.clauses import clause_statements, is_sound, parsed_texts, sound_statements
from formation.offline.world_time import (
    clause_around,
    move_world_times,
    said_day,
    said_in_the_past,
    world_time_fields,
    world_time_fields_of,
    world_time_of,
)

if TYPE_CHECKING:
    from spacy.tokens import Doc

# A clause runs to punctuation, to a conjunction that starts a new first-person clause ("... and I live in"), or to
# a trailing time expression ("... last week").
_CLAUSE_END = (
    r"([^,.;!?]+?)(?=\s+(?:and|but|so|because)\s+(?:i|my|he|she|they|it|we|you|there)\b"
    r"|\s+(?:last|this|next)\s+(?:week|month|year|summer|winter|spring|autumn)\b"
    r"|\s+(?:yesterday|today|tomorrow|recently|now)\b|\s+[-–—]+\s+|[,.;!?]|$"
    r"|\s+(?:in|since|until|from)\s+(?:(?:january|february|march|april|may|june|july|august|september|october"
    r"|november|december)\s+)?(?:19|20)\d\d\b)"
)
# Past-tense verbs of things done, with what follows them making the event ("I ran a half marathon").
_PAST_EVENT_VERBS = (
    r"went|ran|painted|made|lost|started|joined|applied|adopted|bought|visited|finished|took|signed up|volunteered"
    r"|won|wrote|read|learned|learnt|tried|attended|gave|received|found|built|launched|opened|quit|graduated|traveled"
    r"|travelled|booked|created|organized|organised|hosted|completed|celebrated|played|saw|watched|became|met"
    r"|got(?! (?:from|to|into|in|on|at|with|by|for)\b)"  # "I got a puppy", not "the help I've got from my team"
    r"|taught|studied|performed|competed|donated|raised|planted|baked|cooked|drew|designed|published"
)
_MOVED_FROM, _MOVED_TO = "The user used to live in {0}", "The user lives in {1}"
# First-person statements: (pattern, statement template, profile key: "" for none, or "{0}" to take it from the
# first group via _WORK_KEYS).
_FIRST_PERSON: list[tuple[re.Pattern, str, str]] = [
    (re.compile(r"\b(?i:my name is) ([A-Z][\w'-]+(?: [A-Z][\w'-]+)?)"), "The user's name is {0}", "name"),
    (re.compile(r"\bi(?:'m| am) (\d{1,3}) years old", re.I), "The user is {0} years old", "age"),
    (re.compile(r"\bi(?: now)? live in " + _CLAUSE_END, re.I), "The user lives in {0}", "home_city"),
    (re.compile(r"\bi moved to " + _CLAUSE_END, re.I), "The user lives in {0}", "home_city"),
    # "I moved from Boston to Denver": the home left (ended at the move) and the new one (from then on).
    (re.compile(r"\bi moved from ([^,.;!?]+?) to " + _CLAUSE_END, re.I), _MOVED_FROM, ""),
    (re.compile(r"\bi moved from ([^,.;!?]+?) to " + _CLAUSE_END, re.I), _MOVED_TO, "home_city"),
    (re.compile(r"\bi(?:'m| am) from " + _CLAUSE_END, re.I), "The user is from {0}", "hometown"),
    (re.compile(r"\bi(?: now)? work (as|at|for|in) " + _CLAUSE_END, re.I), "The user works {0} {1}", "{0}"),
    (re.compile(r"\bi(?:'m| am) allergic to " + _CLAUSE_END, re.I), "The user is allergic to {0}", ""),
    (
        re.compile(r"\bi(?:'m| am) (?:going to|planning to|about to) " + _CLAUSE_END, re.I),
        "The user plans to {0}",
        "",
    ),
    (
        re.compile(r"\bi (?:really |absolutely |also )?(like|love|enjoy|prefer|hate|dislike) " + _CLAUSE_END, re.I),
        "The user {0}s {1}",
        "",
    ),
    (re.compile(r"\bi have (an?|two|three|four|\d+) " + _CLAUSE_END, re.I), "The user has {0} {1}", ""),
    (
        re.compile(r"\bi (?:really |also |just |still )?(want|hope|plan|need) to " + _CLAUSE_END, re.I),
        "The user {0}s to {1}",
        "",
    ),
    (re.compile(r"\bi(?:'m| am) (?:a big |a huge |a )?fan of " + _CLAUSE_END, re.I), "The user is a fan of {0}", ""),
    (re.compile(r"\bi used to " + _CLAUSE_END, re.I), "The user used to {0}", ""),
    # What the user did: events are what most questions about a person's past ask after.
    (
        re.compile(
            r"\bi(?:'ve| have)? (?:just |recently |finally |also |actually |even )?("
            + _PAST_EVENT_VERBS
            + r") "
            + _CLAUSE_END,
            re.I,
        ),
        "The user {0} {1}",
        "",
    ),
]
_WORK_KEYS = {"as": "job_title", "at": "employer", "for": "employer", "in": "industry"}
_PRONOUNS = [(re.compile(r"\bmy\b", re.I), "their"), (re.compile(r"\bme\b", re.I), "them")]
# Verbs whose objects make one preference attribute: a later "hates X" replaces "loves X".
_PREFERENCE = re.compile(r"^The user (?:like|love|enjoy|prefer|hate|dislike)s (.+)$")

# Where a sentence holds two statements: a conjunction (or a comma, a semicolon) followed by a new subject, or by
# one of the verbs a first-person statement starts with, its "I" left out ("I live in Porto and work at a bakery").
_NEW_SUBJECT = r"(?:i|i'm|i've|my|he|she|they|it|he's|she's|they're|it's|we|we're|you)\b"
_FIRST_PERSON_VERB = r"(?:live|work|love|like|enjoy|prefer|hate|dislike|moved|have|am)\b"
_CLAUSE_BREAK = re.compile(
    rf",?\s+(?:and|but|so|because|while|although)\s+(?={_NEW_SUBJECT}|{_FIRST_PERSON_VERB})|;\s+|,\s+(?={_NEW_SUBJECT})",
    re.I,
)
_ELIDED_I = re.compile(rf"^{_FIRST_PERSON_VERB}", re.I)


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# The user's people (he, she, they) and things (it); pets are either.
_PEOPLE = _word_set(
    """sister brother mother mom mum father dad parents wife husband partner boyfriend girlfriend son daughter kids
    children child friend boss manager colleague coworker neighbour neighbor cousin aunt uncle grandmother grandma
    grandfather grandpa grandparents roommate flatmate teacher doctor therapist"""
)
_PETS = _word_set("dog cat puppy kitten horse parrot rabbit hamster")
# "my X <verb> ...": the verbs that end the noun phrase when they do not end in -s or -ed.
_VERBS = _word_set(
    """is was are were has had have lives live works work runs run plays play visits visit owns own likes like loves
    love hates hate goes go comes come drives drive cooks cook teaches teach studies study makes make knows know
    wants want needs need speaks speak calls call got gets left died can will does do"""
)
_PREDICATE_MY = re.compile(r"\bmy\b", re.I)


@dataclass
class _Antecedent:
    """The last "my X" a pronoun can mean, and its name once given ("my sister is called Ana")."""

    noun: str
    name: str = ""

    @property
    def subject(self) -> str:
        return f"The user's {self.noun}" + (f" {self.name}" if self.name else "")

    def fits(self, pronoun: str) -> bool:
        head = self.noun.split()[-1].lower()
        if pronoun == "it":
            return head not in _PEOPLE
        if pronoun == "they":
            return head in _PEOPLE or head in _PETS or head.endswith("s")
        return head in _PEOPLE or head in _PETS


def _sentences(text: str) -> list[str]:
    return [part.strip() for part in re.split(r"(?<=[.!?])\s+|\n+", text) if part.strip()]


def _clauses(sentence: str) -> list[str]:
    """A sentence cut where a new statement starts; a clause whose "I" was left out gets it back."""
    clauses: list[str] = []
    for part in _CLAUSE_BREAK.split(sentence):
        part = part.strip(" ,;")
        if part:
            clauses.append(f"I {part}" if clauses and _ELIDED_I.match(part) else part)
    return clauses


def _third_person(text: str) -> str:
    for pattern, replacement in _PRONOUNS:
        text = pattern.sub(replacement, text)
    return text.strip()


# A conjunction left at the end of a clause cut before a time ("I used to work at Globex but last week ..."): its
# other half is another clause.
_DANGLING = re.compile(r"(?:\s+(?:and|but|or|so|because|while|although|though|then))+$", re.I)


def _statement(text: str) -> str:
    text = _DANGLING.sub("", text.strip().rstrip(".!,;:")).rstrip(".!,;:")
    return text[:1].upper() + text[1:] + "."


def _attribute(content: str) -> str:
    """What a fact is about, so a newer value of the same attribute updates the older one."""
    preference = _PREFERENCE.match(content)
    if preference:
        return "preference:" + preference.group(1).lower()
    for marker in (" lives in ", " works ", " is from "):
        if marker in content:
            return content.split(marker, 1)[0].lower() + marker.strip()
    # "X's favourite colour is ...": an attribute of someone's; "X is keen on ..." is not one.
    owner, marker, _ = content.partition(" is ")
    if marker and "'s " in owner:
        return owner.lower() + " is"
    return content.lower()


def _stems(text: str) -> set[str]:
    """Content words cut to their first four letters, so "plans" and "planning" count as one word."""
    return {word[:4] for word in content_words(text)}


def _says_no_more(statement: str, *, than: set[str]) -> bool:
    stems = _stems(statement)
    return len(stems) >= 2 and len(stems & than) >= 0.8 * len(stems)


def _first_person_facts(clause: str, *, said: date | None) -> list[tuple[str, str, WorldTime]]:
    """(statement, profile key, when it held) of each first-person pattern the clause matches."""
    found = []
    for pattern, template, key in _FIRST_PERSON:
        for match in pattern.finditer(clause):
            parts = [_third_person(group) for group in match.groups()]
            world_time = world_time_of(clause_around(clause, match.start(), match.end()), said=said)
            if template in (_MOVED_FROM, _MOVED_TO):
                world_time = move_world_times(world_time)[template == _MOVED_TO]
            found.append(
                (
                    _statement(template.format(*parts)),
                    _WORK_KEYS.get(parts[0].lower(), "") if key == "{0}" else key,
                    world_time,
                )
            )
    return found


def _my_noun_phrase(clause: str) -> tuple[str, str] | None:
    """("sister", "is called Ana") for "my sister is called Ana": the noun phrase after "my" runs to its verb."""
    match = re.match(r"^(?:and\s+|but\s+|so\s+)?my\s+(.+)$", clause, re.I)
    if not match:
        return None
    words = match.group(1).split()
    for position, word in enumerate(words[:4]):
        bare = word.lower().strip(",")
        is_verb = bare in _VERBS or (position > 0 and re.fullmatch(r"[a-z]{3,}(?:s|ed)", bare) is not None)
        if position > 0 and is_verb:
            return " ".join(words[:position]), " ".join(words[position:])
    return None


def _about_someone(clause: str, antecedent: _Antecedent | None) -> tuple[str | None, _Antecedent | None]:
    """A statement about a person or thing of the user's ("my brother lives in Berlin", "he plays the cello"), and
    what a pronoun after it will mean."""
    own = _my_noun_phrase(clause)
    if own is not None:
        noun, predicate = own
        if noun.lower() == "name":
            return None, antecedent
        antecedent = _Antecedent(noun=noun)
        named = re.match(r"^is (?:called|named) ([A-Z][\w'-]+)", predicate)
        statement = f"The user's {noun} {_PREDICATE_MY.sub('their', predicate)}"
        if named:
            antecedent.name = named.group(1)
        return _statement(statement), antecedent
    pronoun = re.match(r"^(he|she|they|it)('s|'re)?\s+(.+)$", clause, re.I)
    if pronoun is None or antecedent is None or not antecedent.fits(pronoun.group(1).lower()):
        return None, antecedent
    contraction = {"'s": "is ", "'re": "are "}.get((pronoun.group(2) or "").lower(), "")
    predicate = _PREDICATE_MY.sub("the user's", contraction + pronoun.group(3))
    if len(predicate.split()) < 2:
        return None, antecedent
    return _statement(f"{antecedent.subject} {predicate}"), antecedent


def _named_pet(clause: str) -> _Antecedent | None:
    """ "I have a dog named Biscuit": he/she/it after it is the dog."""
    match = re.search(r"\bi have an? (\w+) (?:named|called) ([A-Z][\w'-]+)", clause, re.I)
    if match is None:
        return None
    return _Antecedent(noun=match.group(1).lower(), name=match.group(2))


# A message of a group conversation logged as "<name>: <text>": the named person speaks, not the session's user.
_SPEAKER_PREFIX = re.compile(r"^([A-Z][\w'-]+(?: [A-Z][\w'-]+)?): (.+)$", re.S)


def _speaker_split(text: str) -> tuple[str, str]:
    """(text, speaker) of a "<name>: <text>" message; (text, "") for any other."""
    match = _SPEAKER_PREFIX.match(text.strip())
    return (match.group(2), match.group(1)) if match else (text, "")


def _said_by(content: str, *, speaker: str) -> str:
    """A statement about "the user" made about the speaker who said it, when the message names one."""
    if not speaker:
        return content
    content = re.sub(r"^The user's\b", f"{speaker}'s", re.sub(r"^The user\b(?!')", speaker, content))
    return re.sub(r"\bthe user's\b", "their", content)  # "Caroline's art is the user's way ...": hers


# What the user asks of the assistant, as reflections: (pattern, note). Groups fill the note.
_REQUESTS: list[tuple[re.Pattern, str]] = [
    (
        re.compile(
            r"^(?i:please,? |and |can you |could you )?(?i:answer|reply|respond|write|talk|speak)(?i: to me)?"
            r" in ([A-Z][a-z]+)"
        ),
        "The user wants replies in {0}.",
    ),
    (
        re.compile(
            r"\b(?:keep (?:it|them|your (?:answers|replies))|be) (?:short|brief|concise)\b"
            r"|\b(?:short|shorter|brief) (?:answers|replies)\b",
            re.I,
        ),
        "The user prefers short answers.",
    ),
    (
        re.compile(r"\b(?:more detail|in detail|detailed answers|longer answers)\b", re.I),
        "The user wants detailed answers.",
    ),
    (re.compile(r"\bbullet points?\b", re.I), "The user likes answers in bullet points."),
    (re.compile(r"\bstep[- ]by[- ]step\b", re.I), "The user likes step-by-step explanations."),
    (re.compile(r"\bcall me ([A-Z][\w'-]+)"), "The user wants to be called {0}."),
    (
        re.compile(
            r"^(?:please,? )?(?:don't|do not|never|stop) (use|send|add|mention|call|give|include|suggest|ask)"
            r"(?:ing)? ([^.!?,]+)",
            re.I,
        ),
        "The user does not want the assistant to {0} {1}.",
    ),
    (
        re.compile(r"\bi(?:'m| am) (trying|working|hoping) to ([^.!?,]+)", re.I),
        "The user is {0} to {1}.",
    ),
    (re.compile(r"\bmy goal is to ([^.!?,]+)", re.I), "The user's goal is to {0}."),
]
_SESSION_REQUESTS: list[tuple[re.Pattern, str]] = [
    (re.compile(r"\bremind me (to|about) ([^.!?]+)", re.I), "The user asked to be reminded {0} {1}."),
    (
        re.compile(r"\b(?:let's|let us) (?:continue|pick (?:this|it) up|come back to (?:this|it))\b([^.!?]*)", re.I),
        "The user wants to continue this conversation{0}.",
    ),
]


# A question that is a request: "Could you reply in French?"
_POLITE_REQUEST = re.compile(r"^(?:could|can|would|will) you (?:please )?", re.I)


def _notes(texts: list[str], requests: list[tuple[re.Pattern, str]]) -> list[str]:
    notes: list[str] = []
    for text in texts:
        for sentence in _sentences(text):
            if sentence.endswith("?"):
                if not _POLITE_REQUEST.match(sentence):
                    continue
                sentence = _POLITE_REQUEST.sub("", sentence).rstrip("?")
            for pattern, template in requests:
                match = pattern.search(sentence)
                if match:
                    parts = [_third_person(group or "").rstrip() for group in match.groups()]
                    notes.append(re.sub(r"\s+", " ", template.format(*parts)).replace(" .", "."))
    return list(dict.fromkeys(notes))


class OfflineLLM(LLMProvider):
    name = "offline"

    def complete(self, request: LLMRequest) -> LLMReply:
        handler = getattr(self, f"_{request.purpose}", None)
        if handler is None:
            raise ValueError(f"the offline provider cannot do {request.purpose!r}")
        text = json.dumps(handler(request.inputs))
        return LLMReply(text=text, model="offline-rules", prompt_tokens=0, completion_tokens=0, latency_ms=0)

    def _extract_facts(self, inputs: dict[str, Any]) -> dict:
        facts: list[dict] = []
        seen: set[str] = set()
        max_words = inputs.get("max_words", 30)
        antecedent: _Antecedent | None = None

        def add(content: str, key: str, number: int, world_time: WorldTime = UNKNOWN_WORLD_TIME) -> None:
            words = len(content.split())
            times = world_time_fields(world_time)
            if words < 3 or words > max_words:  # "Melanie plays clarinet" says enough
                return
            if content.lower() in seen:
                known = next((fact for fact in facts if fact["content"].lower() == content.lower()), None)
                if known is not None and times and not world_time_fields_of(known):
                    known.update(times)  # the same statement read again where its time is said
                return
            # Of two statements where one says no more than the other, the one that says more.
            said = _stems(content)
            for index, known in enumerate(facts):
                replaceable = not known.get("key") and _says_no_more(known["content"], than=said)
                same = _says_no_more(content, than=_stems(known["content"]))
                # Of two that say the same, a checked statement replaces one a reader could not use alone.
                if same and not (replaceable and content in checked and not is_sound(known["content"])):
                    return
                if replaceable:
                    facts.pop(index)
                    break
            seen.add(content.lower())
            fact = {"content": content, "scope": ["user"], "source": [number]}
            if key and not world_time.ended:  # what is over is not the attribute's current value
                fact["key"] = key
            facts.append(fact | times)

        checked: set[str] = set()  # statements the grammar and reference checks already passed
        parses: dict[str, Doc] = {}  # their parses, which the entity graph reads again
        user_messages = [message for message in inputs["messages"] if message["role"] == "user"]
        texts = [said_in_the_past(_speaker_split(message["text"])[0]) for message in user_messages]
        parsed = parsed_texts(texts)
        speaker = ""
        for message, text, doc in zip(user_messages, texts, parsed, strict=True):
            said_by = _speaker_split(message["text"])[1]
            said = said_day(message)
            if said_by != speaker:
                speaker, antecedent = said_by, None  # "she" never means another speaker's sister
            for sentence in _sentences(text):
                if sentence.endswith("?"):
                    continue
                for clause in _clauses(sentence):
                    for content, key, world_time in _first_person_facts(clause, said=said):
                        add(
                            _said_by(content, speaker=speaker),
                            key if not speaker else "",
                            message["number"],
                            world_time,
                        )
                    antecedent = _named_pet(clause) or antecedent
                    about, antecedent = _about_someone(clause, antecedent)
                    if about:
                        add(_said_by(about, speaker=speaker), "", message["number"], world_time_of(clause, said=said))
            clause_words: dict[str, str] = {}
            statements = clause_statements(doc, speaker=speaker or "The user", said=clause_words)
            for content in sound_statements(statements, parses=parses):
                checked.add(content)
                add(content, "", message["number"], world_time_of(clause_words.get(content, ""), said=said))
        unchecked = [[fact["content"]] for fact in facts if fact["content"] not in checked]
        sound = checked | set(sound_statements(unchecked, parses=parses))
        kept = [fact for fact in facts if fact["content"] in sound]
        reply_facts_file(kept, categories=inputs.get("categories", ()))
        return {"facts": kept, **graph_of_facts(kept, parses=parses)}

    def _reconcile_facts(self, inputs: dict[str, Any]) -> dict:
        existing = {fact["number"]: fact["content"] for fact in inputs["existing"]}
        decisions = []
        updated: set[int] = set()  # a fact is updated by one new fact at most: a second would find it closed
        for new in inputs["new_facts"]:
            decision = {"new": new["number"], "action": "ADD", "target": None, "content": None, "reason": "new"}
            for number in new["candidates"]:
                if number in updated:
                    continue
                if existing[number].lower().rstrip(".") == new["content"].lower().rstrip("."):
                    decision |= {"action": "NONE", "target": number, "reason": "already known"}
                    break
                if _attribute(existing[number]) == _attribute(new["content"]):
                    # A new value of the same attribute is a change in the world: the old one ended, the new one is
                    # added (a correction would be an UPDATE; rules cannot tell one from the other, and people
                    # change homes and jobs far more often than they correct what they said).
                    updated.add(number)
                    decision |= {"action": "ENDED", "target": number, "reason": "new value"}
                    break
            decisions.append(decision)
        return {"decisions": decisions}

    def _reflect(self, inputs: dict[str, Any]) -> dict:
        user_texts = [m["text"] for m in inputs["messages"] if m["role"] == "user"]
        memory_text = inputs.get("memory_text", "").lower()
        user = [note for note in _notes(user_texts, _REQUESTS) if note.lower() not in memory_text]
        session = [note for note in _notes(user_texts, _SESSION_REQUESTS) if note.lower() not in memory_text]
        return {"agent": [], "user": user, "session": session}

    def _consolidate(self, inputs: dict[str, Any]) -> dict:
        lines = [line.strip() for line in inputs["current"].splitlines() if line.strip()]
        lines += [f"- {reflection.strip()}" for reflection in inputs["reflections"]]
        asked = [
            sentence
            for message in inputs.get("messages", [])
            if message["role"] == "user"
            for sentence in _sentences(message["text"])
            if sentence.endswith("?")
        ]
        lines += [f"- The user asked: {question}" for question in asked[-3:]]
        unique = list(dict.fromkeys(lines))
        while len(unique) > 1 and sum(len(line.split()) for line in unique) > inputs["word_limit"]:
            unique.pop(0)  # the oldest lines go first
        return {"content": "\n".join(unique) or "- Nothing to note yet."}
