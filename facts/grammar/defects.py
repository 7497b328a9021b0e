"""What a reader calls a garbled fact, found with spaCy's parse of the fact alone: a fact is read later, without the
conversation, so it must be a sentence that stands by itself. Each check names one way a fact fails that (the
labelling rules of benchmarks/fact_audit.py's test set, docs/benchmarks/history.md):

- person: first or second person left in ("... people I know", "saw that you had ..."): the fact speaks about
  someone, never as or to them;
- reference: a pronoun or demonstrative that points at nothing inside the fact ("loves it", "made this", "is
  here", "that name", "came from him");
- possessive: a possessive whose head is not a noun ("The user's hard is ...");
- fragment: no finite verb, or a copula with nothing after it ("... knees are not though");
- garbled: words run together or missing ("loves is awesome", "got was", "plans to a festival", "went to a few
  weeks ago", "made last week");
- mismatch: a copula whose complement cannot describe its subject ("... treat was great chatting", "... face is a
  great way to ...", "... landlord is possible").

Used by the junk audit and by the offline extractor, which drops a clause that fails before it becomes a fact."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from core.llm.spacy_model import english_pipeline, is_common_noun

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


FIRST_AND_SECOND_PERSON = _words("i me my mine myself we us our ours ourselves you your yours yourself yourselves")
_GENDERED = _words("he she him her his hers himself herself")
_PLACE_ADVERBS = frozenset(("here", "there"))
_DEMONSTRATIVES = frozenset(("this", "that", "these", "those"))
_PEOPLE = _words(
    """user sister brother mother mom mum father dad parents parent wife husband partner boyfriend girlfriend son
    daughter kid kids children child friend friends boss manager colleague coworker neighbour neighbor cousin aunt
    uncle grandmother grandma grandfather grandpa grandparents roommate flatmate teacher doctor therapist guy girl
    man woman boy baby mentor coach family team people folks someone somebody anyone everyone others"""
)
# Verbs that say nothing without their object: "made last week", "bought yesterday".
_TRANSITIVE = _words(
    """make buy get take find give love like enjoy hate see bring show use pass want need apply start begin join try
    develop"""
)
# Passing states of the moment of the chat, not about the person: "is hungry now".
_PASSING_STATES = _words("hungry thirsty sleepy bored tired")
# Moods of the chat's moment: "is so excited and thankful", "is staying hopeful", "is excited to get started" say
# nothing a reader can use; with what they are about they do ("is excited about the new job").
_MOODS = _words(
    """excited thrilled thankful grateful glad happy pumped stoked nervous hopeful positive optimistic motivated
    inspired determined ready eager keen psyched amazed touched blessed lucky relieved"""
)
# Verbs a mood's "to ..." names no more with than the mood alone: "excited to get started", "ready to keep going".
_EMPTY_AFTER_MOOD = _words("start begin keep continue get do see try come")
_STARTING = _words("start begin get")
# Reactions to what the other showed or said: "X said the colors are so bright", "adoption sounds awesome".
_PRAISE = _words(
    """awesome amazing great good nice cool beautiful incredible gorgeous lovely wonderful fantastic stunning
    impressive perfect fun special sweet cute inspiring fab neat adorable wild crazy insane epic pretty bright
    fascinating interesting exciting brilliant powerful peaceful relaxing fancy clear electric"""
)
_SEEMING = _words("look sound seem")
# Nouns that, with "the" alone, name what a reader cannot see: "the rest will follow", "figuring out the details".
EMPTY_DEFINITES = _words("rest detail details difference day moment idea thing things one part feeling kind sort")
# Nouns that name nothing without what a reader cannot see: "saw some pretty cool stuff".
_VAGUE_OBJECTS = _words("stuff")
# Verbs that take "to" + a verb, never "to" + a noun: "plans to a festival" lost its verb.
_TO_VERB = _words("plan want hope need try decide intend aim use")
# "X is possible": said of a plan or an event, never of a person or a thing someone has.
_SITUATION_ADJECTIVES = _words("possible impossible likely unlikely necessary worth done over")
# "X is a way to / a reminder / a lot": said of an activity, a thing done or made, not of a person or a body part.
_ACTIVITY_COMPLEMENTS = _words("way reminder lot blast relief pleasure shame bummer")
_ACTIVITIES = _words(
    """hobby passion job work activity interest sport routine focus therapy outlet art
    music dance painting pottery writing reading running cooking baking journey project class course"""
)
# Adjectives that say nothing without what they are about: "was allergic" (to what?).
_NEEDS_COMPLEMENT = _words("allergic afraid scared fond aware capable full")
# Times counted from an event the fact does not name: "the next day" (after what?).
_RELATIVE_PHRASES = frozenset(
    ("next day", "day after", "day before", "same day", "that day", "that time", "same reason", "ever since")
)
_FINITE = frozenset(("VBD", "VBZ", "VBP", "MD"))
_COPULA_COMPLEMENTS = _words("attr acomp prep xcomp ccomp advcl oprd npadvmod dobj agent expl")
# Clauses that say when, not what: "started when she was young" still lacks what was started.
_TIME_MARKERS = _words("when while after before since until once")
# Demonstratives that are times the fact's own date answers ("this month", "that year").
TIME_NOUNS = _words(
    "day days week weekend weeks month months year years summer winter spring autumn fall morning evening night time"
)
# Adverbs that leave a copula as empty as before: "... are not though".
_FILLER_ADVERBS = _words("though too either now still really just so")


def _quoted(doc: Doc) -> set[int]:
    """Token indexes inside quotation marks (a title, a saying): their "I" and "you" are not the fact's."""
    inside, quoted = False, set()
    for token in doc:
        if token.text in {'"', "“", "”"} or token.tag_ in {"``", "''"}:
            inside = not inside
            continue
        if inside:
            quoted.add(token.i)
    return quoted


def _subject(doc: Doc) -> tuple[Token | None, Token | None]:
    root = next((token for token in doc if token.dep_ == "ROOT"), None)
    if root is None:
        return None, None
    return root, next((child for child in root.children if child.dep_ in ("nsubj", "nsubjpass")), None)


def _is_name(token: Token) -> bool:
    """A proper noun, or a capitalised word spaCy tagged a common noun that is no English noun ("Caroline")."""
    return token.pos_ == "PROPN" or (
        token.tag_ == "NN" and token.text[:1].isupper() and token.text[1:].islower() and not is_common_noun(token.text)
    )


def _is_person(token: Token) -> bool:
    return _is_name(token) or token.ent_type_ == "PERSON" or token.lemma_.lower() in _PEOPLE


def _person_defects(doc: Doc, quoted: set[int]) -> list[str]:
    found = [
        f"person: {token.text!r}"
        for token in doc
        if token.lower_ in FIRST_AND_SECOND_PERSON
        and (
            token.tag_ in ("PRP", "PRP$")
            or token.lower_ in ("yours", "yourself", "ourselves", "myself", "mine", "ours")
        )
        and token.text != "US"
        and token.i not in quoted
    ]
    words = [token for token in doc if not token.is_punct or token.text == ","]
    if len(words) > 2 and words[-2].text == "," and words[-1].pos_ == "PROPN" and words[-1].ent_type_ in ("", "PERSON"):
        found.append(f"person: addressed to {words[-1].text}")  # "..., Mel."
    return found


def _governing_verb(token: Token) -> Token | None:
    return next((ancestor for ancestor in token.ancestors if ancestor.pos_ in ("VERB", "AUX")), None)


def _reference_defects(doc: Doc, quoted: set[int]) -> list[str]:
    _, subject = _subject(doc)
    names = {token.text for token in doc if token.pos_ == "PROPN" or token.ent_type_ == "PERSON"}
    found = []
    for token in doc:
        if token.i in quoted:
            continue
        lower = token.lower_
        before = doc[: token.i]
        if lower in ("it", "its") and token.tag_ in ("PRP", "PRP$") and token.dep_ != "expl":
            # "it" as the subject of a copula with a clause after it ("it's fun to ...") points forward.
            if (
                token.dep_ == "nsubj"
                and token.head.lemma_ == "be"
                and any(c.dep_ in ("xcomp", "ccomp") for c in token.head.children)
            ):
                continue
            # Its antecedent is an argument of another verb: "bought a bike and loves it", not "picture life
            # without it" (that would be "itself") nor a noun inside a phrase ("worked with the artist to make it").
            if not any(
                t.pos_ in ("NOUN", "PROPN")
                and t.tag_ not in ("NNS", "NNPS")  # "does exercises to keep it strong": it is not the exercises
                and not _is_person(t)
                and t.text not in names
                and t.ent_type_ != "DATE"
                and t.dep_ in ("dobj", "nsubj", "nsubjpass", "attr", "conj", "appos")
                and _governing_verb(t) != _governing_verb(token)
                for t in before
            ) or (token.dep_ == "nsubj" and token.head.lemma_ == "be"):
                found.append(f"reference: {token.text!r}")
        elif lower in _DEMONSTRATIVES and token.tag_ == "DT":
            # "this necklace", "that lake sunrise": a thing shown or said before, which the fact does not name;
            # "this month" is a time the fact's date answers; "all of that" closes a list.
            closing = token.dep_ == "pobj" and token.head.lower_ == "of" and token.head.head.lower_ == "all"
            closing = closing or any(child.dep_ in ("relcl", "acl") for child in token.children)  # "those who ..."
            time = token.dep_ == "det" and (token.head.lemma_.lower() in TIME_NOUNS or token.head.ent_type_ == "DATE")
            if not closing and not time:
                found.append(f"reference: {token.text!r}" + (f" {token.head.text}" if token.dep_ == "det" else ""))
        elif (
            lower in ("their", "they")
            and token.tag_ in ("PRP", "PRP$")
            and not any(t.pos_ in ("NOUN", "PROPN") for t in before)
        ):
            found.append(f"reference: {token.text!r} before anyone is named")
        elif (
            token.lemma_.lower() in EMPTY_DEFINITES
            and any(child.dep_ == "det" and child.lower_ == "the" for child in token.children)
            and not any(child.dep_ in ("prep", "relcl", "acl", "compound", "amod", "poss") for child in token.children)
        ):
            found.append(f"reference: 'the {token.text}'")  # "the rest", "the details": of what?
        elif token.lemma_.lower() in ("chat", "conversation") and any(c.dep_ == "poss" for c in token.children):
            found.append(f"reference: the {token.text} the fact came from")  # "since their last chat"
        elif lower == "one" and token.dep_ in ("pobj", "dobj", "nsubj", "conj") and not list(token.children):
            found.append("reference: 'one'")
        elif lower in _PLACE_ADVERBS and token.tag_ == "RB":
            if not any(t.ent_type_ in ("GPE", "LOC", "FAC") for t in before):
                found.append(f"reference: {token.text!r}")
        elif (
            token.lemma_.lower() in _VAGUE_OBJECTS
            and token.dep_ in ("dobj", "pobj", "nsubj")
            and not any(
                child.dep_ in ("prep", "relcl")
                or (child.dep_ == "acl" and token.lower_ == "stuff")  # "made something to catch the eye": what?
                or (child.dep_ == "amod" and child.lemma_.lower() not in _PRAISE)
                for child in token.children
            )
        ):
            found.append(f"reference: {token.text!r}")
        elif lower in ("they", "them", "themselves") and token.tag_ == "PRP":
            # "their" may be the subject's own (how a fact says "my"); "they" and "them" are others the fact names.
            # Not the subject of its own verb ("pets bring joy to them": them is not the pets).
            verb = _governing_verb(token)
            own_subject = {c.i for c in (verb.children if verb else ()) if c.dep_ in ("nsubj", "nsubjpass")}
            plural = [
                t
                for t in before
                if t.tag_ in ("NNS", "NNPS") and t.ent_type_ not in ("DATE", "TIME") and t.i not in own_subject
            ]
            joined = any(t.lower_ == "and" and t.head.pos_ in ("NOUN", "PROPN") for t in before)  # "Ana and Bo"
            if not plural and not joined and not any(t.lower_ in ("others", "family", "team", "group") for t in before):
                found.append(f"reference: {token.text!r}")
        elif lower in _GENDERED and token.tag_ in ("PRP", "PRP$"):
            # A possessive ("his mugs") may mean the subject; "he", "him" mean someone else the fact must name.
            candidates = [t for t in before if _is_person(t) and (token.tag_ == "PRP$" or t != subject)]
            if not candidates:
                found.append(f"reference: {token.text!r}")
    return found


def _relative_phrase_defects(doc: Doc) -> list[str]:
    text = doc.text.lower()
    found = [f"reference: {phrase!r}" for phrase in _RELATIVE_PHRASES if phrase in text]
    root, subject = _subject(doc)
    if (
        root is not None
        and root.lemma_ == "be"
        and root.tag_ == "VBD"
        and any(child.dep_ in ("attr", "acomp") and child.like_num for child in root.children)
    ):
        found.append("reference: an age at a moment the fact does not name")  # "X was 17 or so": when?
    words = [token for token in doc if not token.is_punct]
    if words and words[-1].lower_ == "since":  # "... every day since": since what?
        found.append("reference: 'since'")
    return found


def _possessive_defects(doc: Doc) -> list[str]:
    _, subject = _subject(doc)
    named = subject is not None and (
        _is_name(subject) or any(child.dep_ == "poss" and _is_name(child) for child in subject.children)
    )
    if named and any(token.lower_ == "user" and token.i > subject.i for token in doc if subject is not None):
        return ["possessive: the user beside a name"]  # "Caroline's art is the user's way ...": whose?
    return [
        f"possessive: {token.text!r} {token.head.text!r}"
        for token in doc
        if token.dep_ == "poss"
        and token.pos_ in ("NOUN", "PROPN")  # "everyone's right" is a pronoun's
        and token.head.pos_ in ("ADJ", "VERB", "AUX", "ADV", "ADP", "SCONJ", "DET")
    ]


def _fragment_defects(doc: Doc) -> list[str]:
    if not any(token.tag_ in _FINITE for token in doc):
        return ["fragment: no finite verb"]
    root, _ = _subject(doc)
    if root is not None and root.pos_ not in ("VERB", "AUX"):
        return ["fragment: no verb at its root"]
    if (
        root is not None
        and root.tag_ in ("VBG", "VBN", "VB")
        and not any(child.dep_ in ("aux", "auxpass") for child in root.children)
        # "The figurines ... remind Melanie": a present tense after a plural subject, tagged as a base form
        and not (root.tag_ == "VB" and any(c.dep_ == "nsubj" and c.tag_ in ("NNS", "NNPS") for c in root.children))
    ):
        return [f"fragment: {root.text!r} without its auxiliary"]
    if (
        root is not None
        and root.lemma_ == "be"
        and not any(
            child.dep_ in _COPULA_COMPLEMENTS or (child.dep_ == "advmod" and child.lower_ not in _FILLER_ADVERBS)
            for child in root.children
        )
    ):
        return ["fragment: a copula with nothing after it"]
    return []


def _names_a_time(preposition: Token) -> bool:
    """ "in September", "on Saturday": a preposition whose object is a date, which is no object of the verb."""
    return any(child.dep_ == "pobj" and child.ent_type_ in ("DATE", "TIME") for child in preposition.children)


def _says_when(clause: Token) -> bool:
    """ "when she was young": a clause that says when, not what was done."""
    return any(child.dep_ in ("mark", "advmod") and child.lower_ in _TIME_MARKERS for child in clause.children)


def _garbled_defects(doc: Doc) -> list[str]:
    found = []
    if sum(1 for token in doc if token.text in {'"', "“", "”"}) % 2:
        found.append("garbled: a quotation cut in half")  # 'Brave" by ... has a lot of significance'
    found += [
        f"garbled: {token.text!r} of nothing"  # "art can be so healing and a way"
        for token in doc
        if token.lemma_.lower() == "way"
        and token.dep_ in ("attr", "conj")
        and not any(child.dep_ in ("prep", "acl", "relcl", "amod") for child in token.children)
    ]
    words = [token for token in doc if not token.is_punct]
    if words and (words[-1].tag_ == "CC" or words[-1].dep_ in ("cc", "mark", "preconj")):
        found.append(f"garbled: a dangling {words[-1].text!r}")  # "... worked at Globex but."
    for token in doc[:-1]:
        after = doc[token.i + 1]
        if token.tag_ in ("VBD", "VBZ", "VBP") and after.tag_ in ("VBD", "VBZ", "VBP") and token.dep_ != "aux":
            found.append(f"garbled: {token.text} {after.text}")
    for token in doc:
        if token.tag_ == "VBP" and any(
            child.dep_ == "nsubj" and child.tag_ == "NN" and not any(c.dep_ == "conj" for c in child.children)
            for child in token.children
        ):
            # "Irene's team lead Hana": a noun read as a verb
            found.append(f"garbled: {token.text!r} does not agree with its subject")
        if token.dep_ == "expl" and any(child.dep_ == "nsubj" for child in token.head.children):
            found.append("garbled: a subject before 'there'")  # "The user there was no time"
        if token.dep_ == "dep" and token.pos_ == "VERB":
            found.append(f"garbled: stray verb {token.text!r}")
        if token.lower_ == "to" and token.tag_ == "IN" and token.head.lemma_.lower() in _TO_VERB:
            found.append(f"garbled: {token.head.text} to + noun")
        if (
            token.dep_ == "prep"
            and token.tag_ in ("IN", "TO")
            and not any(c.dep_ in ("pobj", "pcomp") for c in token.children)
        ):
            found.append(f"garbled: {token.text!r} without its object")
        if (
            token.pos_ == "VERB"
            and token.lemma_.lower() in _TRANSITIVE
            and token.dep_ in ("ROOT", "conj")
            and (token.tag_ != "VBN" or any(c.dep_ == "auxpass" for c in token.children))
            and not any(
                (c.dep_ in ("dobj", "ccomp", "xcomp", "attr", "dative", "acomp", "oprd", "prt"))
                or (c.dep_ == "advcl" and not _says_when(c))
                or (c.dep_ == "prep" and not _names_a_time(c))
                or (c.dep_ == "advmod" and c.lower_ in ("back", "away", "home", "together", "up", "out"))
                for c in token.children
            )
        ):
            found.append(f"garbled: {token.text!r} without its object")
        if token.lemma_.lower() in _NEEDS_COMPLEMENT and token.dep_ == "acomp" and not list(token.children):
            found.append(f"garbled: {token.text!r} without what about")
        if (
            token.lemma_ == "go"
            and token.dep_ in ("ROOT", "conj", "xcomp")
            and not any(c.dep_ in ("prep", "advmod", "xcomp", "dobj", "conj", "ccomp") for c in token.children)
        ):
            found.append("garbled: 'go' without where")
        if token.lemma_ == "get" and token.dep_ == "auxpass" and any(c.dep_ == "dobj" for c in token.head.children):
            found.append(f"garbled: {token.text} {token.head.text}")
    return found


def _empty_defects(doc: Doc) -> list[str]:
    """Statements that hold nothing about the person: a greeting passed on, a passing state of the moment."""
    found = []
    for token in doc:
        if token.lemma_ == "say" and any(
            c.dep_ in ("dobj", "intj", "ccomp", "npadvmod") and c.lower_ in ("hi", "hello", "thanks", "thank", "bye")
            for c in token.children
        ):
            found.append("fragment: a greeting or thanks passed on")
        if token.dep_ == "acomp" and token.lower_ in _PASSING_STATES and _only_a_mood(token):
            found.append(f"fragment: a passing state ({token.text})")
        elif (
            token.dep_ in ("acomp", "attr")
            and token.lemma_.lower() in _MOODS
            and _only_a_mood(token)
            and _of_a_person(token)
        ):
            found.append(f"fragment: a mood of the moment ({token.text})")
    root, subject = _subject(doc)
    if (
        root is not None
        and subject is not None
        and any(t.lower_ == "others" and t.dep_ == "conj" for t in subject.subtree)
        and any(
            (c.dep_ == "aux" and c.lower_ in ("can", "could", "should", "must"))
            or (c.dep_ == "nsubj" and root.lemma_ in ("have", "be") and any(t.lower_ == "all" for t in c.subtree))
            for c in root.children  # "X and others all have unique paths"
        )
    ):
        found.append("fragment: a cheer or advice of the chat")  # "Caroline and others can make a real impact"
    if root is not None and root.lemma_ == "say":
        said = next((child for child in root.children if child.dep_ == "ccomp"), None)
        if said is not None and _a_reaction(said):
            found.append("fragment: a reaction to the chat")
        elif said is not None and _a_moment_of_a_story(said):
            found.append("fragment: a moment of a story the fact does not place")
    elif root is not None and _a_reaction(root):
        found.append("fragment: a reaction to the chat")
    return found


def _of_a_person(complement: Token) -> bool:
    """ "Rhea is excited", "Rhea's knees are not happy": only the first is a mood of the chat's moment."""
    subject = next((child for child in complement.head.children if child.dep_ in ("nsubj", "nsubjpass")), None)
    return subject is not None and _is_person(subject)


def _a_moment_of_a_story(verb: Token) -> bool:
    """ "X said the sky was so clear", "the kids had such a blast": "the" thing of a moment told in the past, which
    the fact does not name (a thing of someone's, "Dmitri's last loaf was perfect", is named)."""
    subject = next((child for child in verb.children if child.dep_ in ("nsubj", "nsubjpass")), None)
    return (
        subject is not None
        and verb.tag_ == "VBD"
        and verb.lemma_ in ("be", "have")
        and any(child.dep_ == "det" and child.lower_ == "the" for child in subject.children)
        and not any(child.dep_ in ("poss", "prep", "relcl", "acl", "compound") for child in subject.children)
        and not any(child.dep_ == "prep" for complement in verb.children for child in complement.children)
    )


def _only_a_mood(mood: Token) -> bool:
    """A mood with nothing it is about: alone, with another mood ("excited and thankful"), or with a "to" that names
    no more ("excited to get started")."""
    for child in mood.children:
        if child.dep_ in ("advmod", "cc", "punct", "npadvmod"):
            continue
        if child.dep_ == "conj" and child.lemma_.lower() in _MOODS | _PASSING_STATES:
            continue
        if (
            child.dep_ == "xcomp"
            and child.lemma_.lower() in _EMPTY_AFTER_MOOD
            and not any(
                grandchild.dep_ in ("dobj", "xcomp", "ccomp", "attr", "advcl")
                or (grandchild.dep_ == "prep" and child.lemma_.lower() not in _STARTING)
                for grandchild in child.children
            )
        ):
            continue  # "excited to get started (on the real projects)": started on what the fact does not say
        return False
    return True


def _a_reaction(verb: Token) -> bool:
    """ "the colors are so bright", "adoption sounds awesome": praise of what the other showed or said. A thing of
    someone's ("Dmitri's last loaf was perfect") or a general opinion ("unconditional love is important") is not."""
    subject = next((child for child in verb.children if child.dep_ in ("nsubj", "nsubjpass")), None)
    if verb.lemma_ in _SEEMING and any(
        child.dep_ == "prep"
        and child.lower_ == "like"
        and any(word.lemma_.lower() in _PRAISE for word in child.subtree)  # "sounds like a great way to ..."
        for child in verb.children
    ):
        return True
    if verb.lemma_ == "pop" and subject is not None and subject.lemma_.lower() in ("color", "colour"):
        return True  # "the colors really pop"
    praise = [child for child in verb.children if child.dep_ == "acomp" and child.lemma_.lower() in _PRAISE]
    if subject is None or not praise or any(child.dep_ in ("prep", "xcomp", "ccomp") for child in praise[0].children):
        return False
    if verb.lemma_ in _SEEMING:
        return True
    shown = any(child.dep_ == "det" and child.lower_ == "the" for child in subject.children)
    return verb.lemma_ == "be" and shown and subject.pos_ == "NOUN" and not _is_person(subject)


def _mismatch_defects(doc: Doc) -> list[str]:
    root, subject = _subject(doc)
    if root is None or subject is None or root.lemma_ != "be":
        return []
    person_or_owned = _is_person(subject) or any(c.dep_ == "poss" for c in subject.children)
    activity = subject.lemma_.lower() in _ACTIVITIES or subject.lower_.endswith("ing")
    found = []
    for complement in root.children:
        if complement.dep_ == "attr" and complement.lemma_.lower() in TIME_NOUNS and _is_person(subject):
            found.append(f"mismatch: {subject.text} is a {complement.text}")  # "Caroline has been a busy week"
        if complement.dep_ == "acomp" and complement.lemma_.lower() in _SITUATION_ADJECTIVES and person_or_owned:
            found.append(f"mismatch: {subject.text} is {complement.text}")
        if complement.dep_ == "attr" and not activity and not any(c.dep_ == "acomp" for c in root.children):
            busy = any(child.lower_ == "busy" for child in complement.children)  # "has been busy painting"
            if complement.lower_.endswith("ing") and complement.tag_ in ("NN", "VBG") and not busy:
                found.append(f"mismatch: {subject.text} is {complement.text}")
            elif complement.lemma_.lower() in _ACTIVITY_COMPLEMENTS:
                found.append(f"mismatch: {subject.text} is a {complement.text}")
    return found


def doc_defects(doc: Doc) -> list[str]:
    """Every way the parsed fact fails to stand by itself, as "<check>: <what>"; empty for a sound fact."""
    quoted = _quoted(doc)
    return (
        _person_defects(doc, quoted)
        + _reference_defects(doc, quoted)
        + _relative_phrase_defects(doc)
        + _possessive_defects(doc)
        + _fragment_defects(doc)
        + _garbled_defects(doc)
        + _empty_defects(doc)
        + _mismatch_defects(doc)
    )


def facts_defects(texts: Iterable[str]) -> list[list[str]]:
    """doc_defects of each text, parsed in one batch."""
    return [doc_defects(doc) for doc in english_pipeline().pipe(list(texts))]
