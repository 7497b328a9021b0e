"""What the fact search tests share: FILLER, facts unrelated to any question they ask, and the chain of entities the
graph signal's tests walk (Maria -> Tom -> Acme -> Zurich, the `chain` fixture of tests/facts/conftest.py)."""

from __future__ import annotations

from agents.models import Agent, EndUser
from facts.models import EntityType, Fact
from facts.services.facts import fact_create
from facts.services.graph import EntityMention, RelationStatement, fact_relations_write

FILLER = [
    "The user drinks black coffee every morning",
    "The user's sister lives in Porto",
    "The user is allergic to peanuts",
    "The user plays the cello in a community orchestra",
    "The user prefers trains to planes for trips under 600 km",
    "The user's favourite film is Spirited Away",
]


def person(name: str) -> EntityMention:
    return EntityMention(name=name, entity_type=EntityType.PERSON)


def fact_stating(agent: Agent, user: EndUser, content: str, *statements: RelationStatement) -> Fact:
    """A new fact of the user's and the relations it states."""
    fact = fact_create(agent=agent, user=user, scopes=["user"], content=content)
    fact_relations_write(fact=fact, statements=statements, source_messages=[])
    return fact


def chain_create(*, agent: Agent, user: EndUser) -> dict[str, Fact]:
    """Maria -> Tom -> Acme -> Zurich: the fact about Acme's city is two relations from Maria and shares no word with
    a question about her; and FILLER."""
    acme = EntityMention(name="Acme", entity_type=EntityType.ORGANISATION)
    facts = {
        "friend": fact_stating(
            agent,
            user,
            "Maria and Tom met at university",
            RelationStatement(person("Maria"), "friend_of", person("Tom")),
        ),
        "job": fact_stating(agent, user, "Tom works at Acme", RelationStatement(person("Tom"), "works_at", acme)),
        "city": fact_stating(
            agent,
            user,
            "Acme is based in Zurich",
            RelationStatement(acme, "based_in", EntityMention(name="Zurich", entity_type=EntityType.PLACE)),
        ),
    }
    for content in FILLER:
        fact_create(agent=agent, user=user, scopes=["user"], content=content)
    return facts
