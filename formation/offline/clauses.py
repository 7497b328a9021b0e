"""Facts from spaCy's parse of the speaker's own clauses, for the offline provider (provider.py): every clause whose
subject is the speaker ("I went ...", "I'm keen on ...") or someone or something of theirs ("my sister ..."),
or that says something about them ("the support group made me feel accepted"), becomes one statement about the
speaker, in the third person, its verb agreeing. A clause that says too little ("I think so", "I know") is left
out, and so is any statement that fails the grammar and reference checks a reader would apply
(facts.grammar.defects): a clause that leans on the conversation ("I love that", "you did it") cannot stand alone.

The regular expressions of provider.py keep what they know best (names, ages, homes, jobs, and the profile keys they
carry); these facts add the rest of what the speaker said."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from core.llm.spacy_model import english_pipeline, is_common_noun
from facts.grammar.defects import EMPTY_DEFINITES, TIME_NOUNS, doc_defects

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_FIRST_PERSON_OBJECTS = {"me": "them", "myself": "themself", "mine": "theirs"}
# Contractions spaCy splits off "I": their words once the subject is a name.
_CONTRACTIONS = {"'m": "is", "’m": "is", "'ve": "has", "’ve": "has", "'d": "would", "’d": "would", "'ll": "will"}
_THIRD_PERSON = {"am": "is", "have": "has", "do": "does", "are": "is", "go": "goes", "were": "was"}
# Main verbs that, with the speaker as subject, only frame what follows or react to the chat: "I think", "I know".
_FRAMING_VERBS = _words(
    """think know guess mean bet agree wish suppose hear see say tell understand remember imagine reckon believe
    feel hope appreciate thank miss wait"""
)
# What a speaker is in reply to the chat, not about themselves: "I'm glad", "I'm so happy".
_REACTIONS = _words(
    """glad happy fine good great okay ok sure sorry excited thrilled thankful grateful sad bummed proud jealous
    curious interested honored flattered touched impressed amazed right wrong serious kidding ready done busy"""
)
_PRAISE = _words(
    """awesome amazing great good nice cool beautiful incredible gorgeous lovely wonderful fantastic stunning
    impressive perfect fun special sweet cute inspiring fab neat adorable wild crazy insane epic"""
)
_NOT_A_THING = _words("aww aw wow haha omg yay oh ah ooh hey hi yeah yep nope lol lot thing things stuff")
# Spoken contractions spaCy splits into pieces no verb form can be made of ("wanna" -> "wan", "na").
_SPELLED_OUT = {"gonna": "going to", "wanna": "want to", "gotta": "have to"}
_INFORMAL = re.compile(r"\b(?:gonna|wanna|gotta)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# Children whose subtrees are not part of the clause's own statement (other clauses, interjections, asides).
_OTHER_PARTS = frozenset(("conj", "cc", "parataxis", "intj", "discourse", "dep", "meta", "preconj"))
# Clauses that hang on another verb but can be set off from it by a comma, each then a statement of its own.
_SET_OFF = frozenset(("ccomp", "parataxis", "advcl", "conj"))
_CONTENT_POS = frozenset(("NOUN", "PROPN", "NUM", "ADJ", "VERB"))
_SECOND_PERSON = frozenset(("you", "your", "yours", "yourself", "yourselves"))
_DEMONSTRATIVES = frozenset(("this", "that", "these", "those"))
# Who "he" or "her" can mean in a clause: "my brother ... his", "a friend ... her".
_PEOPLE_NOUNS = _words(
    """sister brother mother mom mum father dad wife husband partner boyfriend girlfriend son daughter kid child friend
    boss manager colleague coworker neighbour neighbor cousin aunt uncle grandmother grandma grandfather grandpa
    roommate teacher doctor therapist mentor coach guy girl man woman boy baby buddy"""
)
_FIRST_PERSON_PLURAL = {"us": "them", "our": "their", "ours": "theirs", "ourselves": "themselves"}
# Contractions after any other subject: "Pottery's so relaxing", "they're".
_OTHER_CONTRACTIONS = {"'re": "are", "’re": "are", "'ve": "have", "’ve": "have", "'d": "would", "’d": "would"}


def _third_person_verb(token: Token) -> str:
    """The verb of a clause whose subject was "I", agreeing with a name: "love" -> "loves", "am" -> "is"."""
    lower = token.lower_
    if lower in _CONTRACTIONS:
        return _CONTRACTIONS[lower]
    if token.tag_ not in ("VBP", "VB"):
        return token.text
    if lower in _THIRD_PERSON:
        return _THIRD_PERSON[lower]
    if re.search(r"(?:s|sh|ch|x|z|o)$", lower):
        return lower + "es"
    if re.search(r"[^aeiou]y$", lower):
        return lower[:-1] + "ies"
    return lower + "s"


def _subject_of(verb: Token) -> Token | None:
    subject = next((child for child in verb.children if child.dep_ in ("nsubj", "nsubjpass")), None)
    own_expletive = any(child.dep_ == "expl" for child in verb.children)  # "... and there was no time"
    if subject is None and verb.dep_ == "conj" and verb.head.pos_ in ("VERB", "AUX") and not own_expletive:
        return _subject_of(verb.head)
    return subject


def _after_a_comma(token: Token) -> bool:
    """A clause set off by punctuation from the verb it hangs on ("..., I have an early meeting"): its own
    statement, not part of the other's."""
    doc, left, right = token.doc, token.left_edge.i, token.right_edge.i
    set_off = (left > 0 and doc[left - 1].is_punct) or (right + 1 < len(doc) and doc[right + 1].text in (";", "-", "–"))
    return set_off and token.dep_ in _SET_OFF and _has_subject(token)


def _has_subject(verb: Token) -> bool:
    return any(child.dep_ in ("nsubj", "nsubjpass") for child in verb.children)


def _clause_tokens(verb: Token, subject: Token) -> list[Token]:
    """The tokens of the clause headed by `verb`, its subject first, without other clauses joined to it, asides to
    the listener, or what comes before the subject and a comma ("Honestly, ...", "By the way, ...")."""
    excluded: set[int] = set()
    for child in verb.children:
        if (
            child.dep_ in _OTHER_PARTS
            or (child.dep_ == "punct" and child.i < verb.i)
            or _after_a_comma(child)
            or (child.i < subject.i and child.dep_ not in ("nsubj", "nsubjpass", "aux", "neg", "auxpass"))
        ):
            excluded.update(token.i for token in child.subtree)
        elif child.dep_ in ("advcl", "prep", "npadvmod", "advmod", "ccomp") and any(
            token.lower_ in _SECOND_PERSON for token in child.subtree
        ):
            excluded.update(token.i for token in child.subtree)  # an aside to the listener: the rest still stands
    for token in verb.subtree:
        if token.dep_ in ("relcl", "acl") and any(word.lower_ in _SECOND_PERSON for word in token.subtree):
            excluded.update(word.i for word in token.subtree)  # "that book you recommended": that book
    tokens = [token for token in verb.subtree if token.i not in excluded]
    if subject.head != verb:  # a subject shared with an earlier verb ("I went and saw")
        tokens = list(subject.subtree) + [token for token in tokens if token.i > subject.i]
    while tokens and (tokens[-1].is_punct or tokens[-1].dep_ in ("cc", "mark")):
        tokens.pop()
    while tokens and (tokens[0].is_punct or tokens[0].dep_ in ("cc", "mark")):
        tokens.pop(0)
    return tokens


def _describable(demonstrative: Token) -> bool:
    """ "this bowl" can be "the bowl"; "this month" is a time, and "make this work" is no noun at all."""
    noun = demonstrative.head
    causative = noun.lemma_ in ("work", "happen") and noun.head.lemma_ in ("make", "let", "help")  # a verb misread
    return noun.lemma_.lower() not in TIME_NOUNS | EMPTY_DEFINITES and not causative  # "that feeling": which?


def _mid_sentence(speaker: str) -> str:
    """ "The user" inside a sentence is "the user"; a name stays as it is."""
    return "the" + speaker[3:] if speaker.startswith("The ") else speaker


def _rendered(tokens: list[Token], *, verbs_of_speaker: set[int], speaker: str) -> str:
    """The clause as a statement about the speaker: "I" and the first "me"/"my" become their name, later ones
    they/their; verbs whose subject was "I" agree with the name."""
    named = False
    words: list[str] = []
    for position, token in enumerate(tokens):
        lower = token.lower_
        following = tokens[position + 1] if position + 1 < len(tokens) else None
        space = token.whitespace_ if following is None or following.i == token.i + 1 else " "
        if lower in ("i", "we") and token.tag_ == "PRP":
            text = _mid_sentence(speaker) if words else speaker
            text += " and others" if lower == "we" else ""
            named = True
        elif lower in _FIRST_PERSON_PLURAL and token.tag_ in ("PRP", "PRP$"):
            text = _FIRST_PERSON_PLURAL[lower]
        elif lower == "my" and token.tag_ == "PRP$":
            text = "their" if named else f"{speaker}'s"
            named = True
        elif lower in _FIRST_PERSON_OBJECTS and token.tag_ == "PRP":
            text = _mid_sentence(speaker) if lower == "me" else _FIRST_PERSON_OBJECTS[lower]
        elif lower == "n't":
            text = " not"
            words[-1] = words[-1].rstrip()
        elif following is not None and following.lower_ == "n't" and lower in ("ca", "wo"):
            text = {"ca": "can", "wo": "will"}[lower] if token.text.islower() else token.norm_.capitalize()
        elif lower in _DEMONSTRATIVES and token.dep_ == "det" and _describable(token):
            text = "The" if not words else "the"  # "made this bowl": a bowl the chat showed, described
        elif token.i in verbs_of_speaker:
            text = _third_person_verb(token)
            if lower in _CONTRACTIONS and words:
                words[-1] = words[-1].rstrip() + " "
        elif (lower in ("'s", "’s") and token.pos_ == "AUX") or lower in _OTHER_CONTRACTIONS:
            has = following is not None and following.tag_ == "VBN"
            text = _OTHER_CONTRACTIONS.get(lower) or ("has" if has else "is")
            if words:
                words[-1] = words[-1].rstrip() + " "
        else:
            text = token.text
        words.append(text + space)
    sentence = "".join(words).strip()
    sentence = re.sub(r"\s+([,.;:!])", r"\1", sentence)
    sentence = sentence[:1].upper() + sentence[1:].rstrip(" ,;:-–—")
    if sentence.count('"') % 2:  # a title the clause ends in: 'a piece called "Finding Freedom'
        sentence = sentence.rstrip(".!?") + '"'
    return sentence + "."


def _speaker_verbs(tokens: list[Token]) -> set[int]:
    """Indexes of the verbs and auxiliaries that agree with an "I" subject: the first finite one of each verb whose
    subject is "I"."""
    agreeing = set()
    for token in tokens:
        subject = _subject_of(token) if token.pos_ in ("VERB", "AUX") else None
        if subject is None or subject.lower_ != "i":
            continue
        auxiliaries = [child for child in token.children if child.dep_ in ("aux", "auxpass") and child.i < token.i]
        first = auxiliaries[0] if auxiliaries else token
        agreeing.add(first.i)
    return agreeing


def _informative(tokens: list[Token], verb: Token) -> bool:
    content = [
        token
        for token in tokens
        if token.pos_ in _CONTENT_POS and not token.is_stop and token.lower_ not in ("i", "my", "me")
    ]
    if verb.lemma_.lower() in _FRAMING_VERBS and not any(child.dep_ == "dobj" for child in verb.children):
        return False
    if verb.lemma_ == "be" and len(content) == 1 and content[0].dep_ in ("acomp", "attr"):
        return content[0].lemma_.lower() not in _REACTIONS  # "I'm vegetarian", not "I'm glad"
    return len(content) >= 2


def _about_speaker(tokens: list[Token], subject: Token) -> bool:
    if subject.lower_ in ("i", "we"):
        return True
    if subject.pos_ == "PRON" and not any(child.lower_ == "my" for child in subject.children):
        return False
    return any(token.lower_ in ("my", "me", "myself") for token in tokens)


def _without_asides(verb: Token, tokens: list[Token]) -> list[Token]:
    """The clause without what follows its verb beyond its object (prepositions, adverbs, clauses): a shorter
    statement to try when the whole one leans on the conversation."""
    optional = {
        token.i
        for child in verb.children
        if child.i > verb.i and child.dep_ in ("advcl", "prep", "npadvmod", "advmod", "ccomp", "xcomp")
        for token in child.subtree
    }
    kept = [child for child in verb.children if child.i not in optional]
    if not any(child.dep_ in ("dobj", "attr", "acomp", "oprd", "dative") for child in kept):
        return tokens  # without its asides the verb would say nothing ("has been trying")
    shorter = [token for token in tokens if token.i not in optional]
    while shorter and (shorter[-1].is_punct or shorter[-1].dep_ in ("cc", "mark")):
        shorter.pop()
    return shorter


def _names_a_thing(subject: Token) -> bool:
    """A subject a report can keep: a noun, not the listener called by name ("Ben! I have news"), an interjection
    the parser took for one ("Aww, that must be fun"), a thing shown in the chat ("that bowl is awesome") or "a
    lot"."""
    after = subject.doc[subject.i + 1] if subject.i + 1 < len(subject.doc) else None
    vocative = after is not None and after.is_punct and subject.pos_ == "PROPN"
    pointed = any(child.lower_ in ("this", "that", "these", "those") for child in subject.children)
    return subject.pos_ in ("NOUN", "PROPN") and not vocative and not pointed and subject.lower_ not in _NOT_A_THING


def _says_more_than_praise(tokens: list[Token], subject: Token) -> bool:
    """ "The creativity and skill is awesome" is a reaction to what the other showed; "pets are awesome for joy and
    comfort" says something."""
    named = {token.i for token in subject.subtree}
    return any(
        token.pos_ in _CONTENT_POS
        and not token.is_stop
        and token.i not in named
        and token.lemma_.lower() not in _PRAISE
        and token.lemma_ != "be"
        for token in tokens
    )


_GENDERED = frozenset(("he", "she", "him", "her", "his", "hers", "himself", "herself"))


def _someone_unnamed(tokens: list[Token]) -> bool:
    """A clause of the speaker's with "he", "her" or "his" and no name before it: someone the chat named earlier
    ("veggies are his fave"); the speaker's own words are said with "their"."""
    for token in tokens:
        if token.lower_ in _GENDERED and token.tag_ in ("PRP", "PRP$"):
            return True
        if token.pos_ == "PROPN" or (token.pos_ == "NOUN" and token.lemma_.lower() in _PEOPLE_NOUNS):
            return False
    return False


def _a_name(token: Token) -> bool:
    """A first word that keeps its capital after "X said": a name ("Efua won a ribbon", though tagged a common noun),
    "I", not a word of the dictionary ("Pottery is relaxing")."""
    if token.pos_ == "PROPN" or token.text == "I":
        return True
    common = is_common_noun(token.text) or is_common_noun(token.lemma_)  # "Kids" is "kid"'s
    return token.text[:1].isupper() and token.pos_ == "NOUN" and not token.is_stop and not common


def _elided_subject(verb: Token) -> bool:
    """ "Started hitting the gym last week", "Been reading that book": the speaker's own "I" left out."""
    words = [token for token in verb.sent if not token.is_punct and token.dep_ != "intj"]
    if not words or verb.dep_ != "ROOT":
        return False
    first = words[0]
    return (first == verb and verb.tag_ in ("VBD", "VBN")) or (
        first.head == verb and first.dep_ == "aux" and first.lower_ == "been"
    )


def _clause_words(verb: Token) -> str:
    """The words of the clause a verb heads as said, with what comes before its subject ("Yesterday, I went ...")
    and without the other clauses joined to it: what says when its statement held (formation.offline.world_time)."""
    excluded = {
        token.i
        for child in verb.children
        if child.dep_ in _OTHER_PARTS or _after_a_comma(child)
        for token in child.subtree
    }
    return " ".join(token.text for token in verb.subtree if token.i not in excluded)


def clause_statements(doc: Doc, *, speaker: str, said: dict[str, str] | None = None) -> list[list[str]]:
    """Statements about the speaker, one per informative clause of the parsed text (questions left out), each as
    its alternatives, the fullest first: the clause as said, then without its asides. A clause whose subject is
    neither the speaker nor theirs but a thing named ("pottery is so relaxing") is reported as said by them.
    `said` is given each alternative's clause as said (_clause_words)."""
    statements = []
    for sentence in doc.sents:
        if sentence.text.rstrip().endswith("?"):
            continue
        for verb in sentence:
            if verb.pos_ not in ("VERB", "AUX") or not (verb.dep_ in ("ROOT", "conj") or _after_a_comma(verb)):
                continue
            subject = _subject_of(verb)
            prefix = ""
            if subject is None:
                if not _elided_subject(verb):
                    continue
                first = next(token for token in verb.sent if not token.is_punct and token.dep_ != "intj")
                prefix = f"{speaker} has " if first.lower_ == "been" else f"{speaker} "
                tokens = _clause_tokens(verb, verb)
            else:
                tokens = _clause_tokens(verb, subject)
                if not _about_speaker(tokens, subject):
                    if not _names_a_thing(subject) or not _says_more_than_praise(tokens, subject):
                        continue
                    prefix = f"{speaker} said "
            if len(tokens) < 3 or not _informative(tokens, verb) or _someone_unnamed(tokens):
                continue
            alternatives = []
            for version in (tokens, _without_asides(verb, tokens)):
                if len(version) < 2:
                    continue
                rendered = _rendered(version, verbs_of_speaker=_speaker_verbs(version), speaker=speaker)
                if prefix:
                    first = version[0]
                    body = rendered if _a_name(first) else rendered[:1].lower() + rendered[1:]
                    rendered = prefix + body
                alternatives.append(rendered)
            if said is not None:
                words = _clause_words(verb)
                for alternative in alternatives:
                    said.setdefault(alternative, words)
            statements.append(list(dict.fromkeys(alternatives)))
    return statements


def sound_statements(statements: list[list[str]], *, parses: dict[str, Doc] | None = None) -> list[str]:
    """Of each statement's alternatives, the first a reader can use alone: the first the grammar and reference checks
    find nothing wrong with; none when all fail. The shorter alternatives are parsed only where the fuller failed.
    `parses` is given the parse of each statement chosen (the entity graph reads the same parse)."""
    chosen: list[str | None] = [None] * len(statements)
    pending = list(range(len(statements)))
    for level in range(max((len(alternatives) for alternatives in statements), default=0)):
        pending = [index for index in pending if level < len(statements[index])]
        texts = [statements[index][level] for index in pending]
        failed = []
        for index, doc in zip(pending, english_pipeline().pipe(texts), strict=True):
            if doc_defects(doc):
                failed.append(index)
            else:
                statement = chosen[index] = statements[index][level]
                if parses is not None:
                    parses[statement] = doc
        pending = failed
    return [statement for statement in chosen if statement is not None]


def is_sound(statement: str) -> bool:
    return not doc_defects(english_pipeline()(statement))


def parsed_texts(texts: list[str]) -> list[Doc]:
    """The texts parsed in one batch, their questions left out (no statement comes from them), without named
    entities (the clauses do not need them; the checks of the statements do)."""
    statements = [
        _INFORMAL.sub(
            lambda match: _SPELLED_OUT[match.group(0).lower()],
            " ".join(sentence for sentence in _SENTENCE_END.split(text) if not sentence.rstrip().endswith("?")),
        )
        for text in texts
    ]
    return list(english_pipeline().pipe(statements, disable=["ner"]))
