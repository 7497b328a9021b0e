"""The entities and relations facts state: read from facts in the third person ("The user ..." or a speaker's name,
pronouns already resolved), parsed with spaCy's small English model, in the JSON schema of the extraction reply
(facts/prompts/extract_facts.txt). Both the offline extractor's replies and the facts written through the API and
imports without relations (facts.services.graph_extraction) get their graph here.

Per fact, from the dependency parse:
- the subject: "The user" is the user; "The user's sister" (or "Caroline's sister") is a person named by an apposition
  or "is called" when the fact gives a name ("The user's sister Maria"), else described ("the user's sister"), with
  the relation `sister_of` to the owner: "subject is the object's <role>". The description is kept as an alias, so
  the sister named in a later fact is the same entity;
- the relations: the verb's objects and prepositional objects, the predicate being the verb as written plus the
  preposition (lives_in, works_at, went_to, loves); an object with a proper noun or a named entity in it is an entity
  (typed from spaCy's label), any other a value ("nurse"). Dates are left to the fact's own date.
A fact whose subject is a pronoun or a common noun yields nothing: saying less beats guessing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.llm.spacy_model import english_pipeline, is_common_noun

if TYPE_CHECKING:
    from collections.abc import Mapping

    from spacy.tokens import Doc, Span, Token

USER = "user"
_ENTITY_TYPES = {
    "PERSON": "person",
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "ORG": "organisation",
    "NORP": "organisation",
    "EVENT": "event",
}
_NOT_ENTITIES = {"DATE", "TIME", "CARDINAL", "ORDINAL", "QUANTITY", "PERCENT", "MONEY"}
_PEOPLE = frozenset(
    """sister brother mother mom mum father dad parent parents wife husband partner boyfriend girlfriend son daughter
    kid kids children child friend boss manager colleague coworker neighbour neighbor cousin aunt uncle grandmother
    grandma grandfather grandpa grandparents roommate flatmate teacher doctor therapist mentor""".split()  # noqa: SIM905
)
_NAMING_VERBS = {"call", "name"}
_OBJECTS = {"dobj", "attr", "oprd", "acomp"}
_SUBJECTS = {"nsubj", "nsubjpass"}


class _Graph:
    def __init__(self) -> None:
        self.entities: dict[str, dict] = {}
        self.relations: list[dict] = []

    def entity(self, name: str, entity_type: str, aliases: tuple[str, ...] = ()) -> str:
        key = name.lower()
        known = self.entities.setdefault(key, {"name": name, "type": entity_type, "aliases": []})
        if known["type"] == "thing":
            known["type"] = entity_type
        known["aliases"] += [alias for alias in aliases if alias not in known["aliases"]]
        return known["name"]

    def relate(self, fact: int, subject: str, predicate: str, *, target: str = "", value: str = "") -> None:
        relation = {"fact": fact, "subject": subject, "predicate": predicate}
        relation |= {"object": target} if target else {"value": value}
        if relation not in self.relations:
            self.relations.append(relation)


def _phrase(token: Token) -> Span:
    """The noun phrase a token heads, without its determiner, its possessor and what hangs on it by a preposition
    or a clause ("a dog named Rex" is "dog")."""
    doc = token.doc
    words = [
        child
        for child in token.subtree
        if child.i == token.i
        or (child.head.i == token.i and child.dep_ in ("compound", "amod", "nummod", "flat"))
        or (child.head.dep_ == "compound" and child.head.head.i == token.i and child.dep_ == "compound")
    ]
    return doc[min(word.i for word in words) : max(word.i for word in words) + 1]


def _named_entity_type(span: Span) -> str | None:
    """The entity type of a phrase that names something (a proper noun, or a named entity spaCy found in it), or None
    for a plain value or a date."""
    labels = {token.ent_type_ for token in span if token.ent_type_}
    if labels & _NOT_ENTITIES and not labels - _NOT_ENTITIES:
        return None
    for label in labels:
        if label in _ENTITY_TYPES:
            return _ENTITY_TYPES[label]
    return "thing" if any(token.pos_ == "PROPN" for token in span) else None


def _given_name(token: Token) -> str:
    """The name a noun is given in the fact: "sister Maria" (apposition), "a dog named Rex"."""
    for child in token.children:
        if child.dep_ == "appos" and child.pos_ == "PROPN":
            return _phrase(child).text
        if child.dep_ == "acl" and child.lemma_ in _NAMING_VERBS:
            names = [grandchild for grandchild in child.children if grandchild.dep_ == "oprd"]
            if names:
                return _phrase(names[0]).text
    return ""


def _owned(graph: _Graph, fact: int, owner: str, noun: Token, name: str) -> str:
    """Someone or something of the owner's ("the user's sister"): named when the fact names them, described
    otherwise, the description kept as an alias; a person is tied to the owner by `<noun>_of`."""
    owner_phrase = "the user" if owner == USER else owner
    described = f"{owner_phrase}'s {noun.text.lower()}"
    is_person = noun.lemma_.lower() in _PEOPLE or noun.text.lower() in _PEOPLE
    entity = graph.entity(name or described, "person" if is_person else "thing", (described,))
    if is_person:
        graph.relate(fact, entity, f"{noun.text.lower()}_of", target=owner)
    return entity


def _subject(graph: _Graph, fact: int, token: Token, root: Token) -> str | None:
    if token.lemma_.lower() == USER and not any(child.dep_ == "poss" for child in token.children):
        return USER
    owners = [child for child in token.children if child.dep_ == "poss"]
    if owners:
        owner = _subject(graph, fact, owners[0], root)
        if owner is None or token.lemma_.lower() == "name":
            return None  # "The user's name is ...": the profile says it
        if _an_attribute(token, root):
            return None  # "The user's favourite colour is purple": a value of the user's, no entity of its own
        name = _given_name(token)
        if not name and root.lemma_ in _NAMING_VERBS:
            names = [child for child in root.children if child.dep_ in ("oprd", "attr") and child.pos_ == "PROPN"]
            name = _phrase(names[0]).text if names else ""
        return _owned(graph, fact, owner, token, name)
    # A name that starts the fact is sometimes tagged a common noun ("Caroline is from Sweden").
    leading_name = token.i == 0 and token.text[:1].isupper() and token.tag_ == "NN" and token.lemma_ != token.text
    if (token.pos_ == "PROPN" or leading_name) and not _a_common_noun(token):
        span = _phrase(token)
        entity_type = _named_entity_type(span)
        if entity_type in (None, "thing"):  # a name spaCy gave no type of ours: a person, unless it typed it otherwise
            entity_type = "thing" if any(word.ent_type_ for word in span) else "person"
        return graph.entity(span.text, entity_type)
    return None


def _a_common_noun(token: Token) -> bool:
    """A capitalised common noun spaCy names nothing of ours with ("Exercise helps ...", "Nature's beauty"): no name.
    A proper noun spaCy gave no entity type at all stays a name: many names are English nouns too (Ana, Rose, Hope)."""
    if token.ent_type_ in _ENTITY_TYPES or not is_common_noun(token.text):
        return False
    return token.pos_ != "PROPN" or bool(token.ent_type_)


def _an_attribute(noun: Token, root: Token) -> bool:
    """ "The user's colour is purple": a thing of the owner's that is not a person, given no name, whose value the
    copula states: the owner's attribute (the relation `<noun>` with that value), not an entity."""
    is_person = noun.lemma_.lower() in _PEOPLE or noun.text.lower() in _PEOPLE
    return root.lemma_ == "be" and noun.dep_ in _SUBJECTS and not is_person and not _given_name(noun)


def _objects(verb: Token) -> list[tuple[str, Token]]:
    """(predicate, object head) for the verb's objects and prepositional objects, following "loves hiking" and
    "plans to visit" to the verb that carries them."""
    found = []
    for child in verb.children:
        if child.dep_ in _OBJECTS:
            found.append((verb.text.lower(), child))
        elif child.dep_ == "prep":
            found += [
                (f"{verb.text.lower()}_{child.text.lower()}", pobj) for pobj in child.children if pobj.dep_ == "pobj"
            ]
        elif child.dep_ == "xcomp" and child.tag_ == "VBG":
            found.append((verb.text.lower(), child))  # "loves hiking in the mountains": the activity is the value
        elif child.dep_ == "xcomp" and child.pos_ in ("VERB", "AUX"):
            found += [(f"{verb.text.lower()}_to_{predicate}", target) for predicate, target in _objects(child)]
    return found


def _fact_graph(graph: _Graph, fact: int, doc: Doc) -> None:
    root = next((token for token in doc if token.dep_ == "ROOT"), None)
    if root is None:
        return
    subjects = [child for child in root.children if child.dep_ in _SUBJECTS]
    if not subjects:
        return
    owners = [child for child in subjects[0].children if child.dep_ == "poss"]
    if owners and _an_attribute(subjects[0], root) and subjects[0].lemma_.lower() != "name":
        owner = _subject(graph, fact, owners[0], root)
        attribute = "_".join(_phrase(subjects[0]).text.lower().split())
        for _, target in _objects(root):
            if owner is not None and target.dep_ in ("attr", "acomp") and target.pos_ in ("NOUN", "ADJ", "PROPN"):
                graph.relate(fact, owner, attribute, value=_phrase(target).text)
        return
    subject = _subject(graph, fact, subjects[0], root)
    if subject is None or root.lemma_ in _NAMING_VERBS:
        return
    for predicate, target in _objects(root):
        if target.dep_ == "oprd" and root.lemma_ in _NAMING_VERBS:
            continue
        span = _phrase(target) if target.tag_ != "VBG" else target.doc[target.left_edge.i : target.right_edge.i + 1]
        owners = [child for child in target.children if child.dep_ == "poss"]
        owner = _subject(graph, fact, owners[0], root) if owners else None
        entity_type = _named_entity_type(span)
        name = _given_name(target)
        if owner is not None:
            graph.relate(fact, subject, predicate, target=_owned(graph, fact, owner, target, name))
        elif name:
            described = f"{'the user' if subject == USER else subject}'s {target.text.lower()}"
            graph.relate(fact, subject, predicate, target=graph.entity(name, "thing", (described,)))
        elif owners:  # a possessor that names nothing ("Nature's beauty"): the phrase is a value
            graph.relate(fact, subject, predicate, value=target.doc[owners[0].i : span.end].text)
        elif entity_type is not None:
            graph.relate(fact, subject, predicate, target=graph.entity(span.text, entity_type))
        elif not any(token.ent_type_ in _NOT_ENTITIES for token in span) and target.pos_ in ("NOUN", "ADJ", "VERB"):
            graph.relate(fact, subject, predicate, value=span.text)


def graph_of_facts(facts: list[dict], *, parses: Mapping[str, Doc] | None = None) -> dict:
    """{"entities": [...], "relations": [...]} for the facts of one reply (relations name their fact from 1). A fact
    whose full parse (tagger, parser, lemmas and named entities) is in `parses` is not parsed again."""
    graph = _Graph()
    contents = [fact["content"] for fact in facts]
    parses = parses or {}
    parsed = iter(english_pipeline().pipe([content for content in contents if content not in parses]))
    for number, content in enumerate(contents, start=1):
        _fact_graph(graph, number, parses[content] if content in parses else next(parsed))
    return {"entities": list(graph.entities.values()), "relations": graph.relations}
