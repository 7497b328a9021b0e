"""Formation step 2: the LLM lists candidate facts from the conversation window, and in the same reply the entities
they name and the relations they state (each relation pointing at the fact it comes from)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from django.conf import settings

from agents.categories import OTHER, MemoryCategory
from agents.models import Agent
from agents.selectors.categories import CategoryConfiguration, agent_category_configuration
from conversations.models import Message
from conversations.services.conversation_text import NumberedMessage, conversation_render, injected_memory_text
from core.llm.client import OutputInvalid, llm_complete_json, prompt_render
from core.models import SensitiveDataFinding
from core.safety.sensitive_screening import holds_a_secret, statement_screen
from facts.grammar.categories import CustomCategory, custom_lexicon, statement_file
from facts.grammar.output_rules import (
    ABOUT_THE_USER,
    content_words,
    copies,
    grounded,
    is_greeting,
    is_question,
    restates,
    word_count,
)
from facts.models import EntityType, FactScope
from facts.services.graph import EntityMention, RelationStatement, entity_name_normalize, predicate_normalize
from facts.world_time import UNKNOWN_WORLD_TIME, WorldTime, WorldTimeInvalid, world_time_parse

PROMPT = Path(__file__).resolve().parent.parent / "prompts" / "extract_facts.txt"
PROFILE_KEY = re.compile(r"^[a-z][a-z0-9_]{0,99}$")
MIN_FACT_WORDS = 4
# The reply's shape, sent as the response_format where the endpoint takes a schema (the validation below still runs).
# The bounds keep a constrained small model from looping (a source list counting up until the context is full).
SCHEMA = {
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "maxItems": 50,
            "items": {
                "type": "object",
                "properties": {
                    "content": {"type": "string"},
                    "scope": {"type": "array", "items": {"type": "string", "enum": ["user", "agent"]}},
                    "key": {"type": "string"},
                    "source": {"type": "array", "items": {"type": "integer"}, "maxItems": 10},
                    # When the statement held in the world: "YYYY", "YYYY-MM" or "YYYY-MM-DD", "~" in front when
                    # approximate; held_until may be "ended" (facts.world_time.world_time_parse).
                    "held_from": {"type": "string", "maxLength": 11},
                    "held_until": {"type": "string", "maxLength": 11},
                    # The topic it is filed under (a slug of the agent's set, which the prompt lists: the reply's
                    # validation keeps only those) and what it says there.
                    "category": {"type": "string", "maxLength": 50},
                    "category_value": {"type": "string", "maxLength": 200},
                },
                "required": ["content", "scope", "source"],
            },
        },
        "entities": {
            "type": "array",
            "maxItems": 50,
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "type": {"type": "string", "enum": list(EntityType.values)},
                    "aliases": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
                },
                "required": ["name", "type"],
            },
        },
        "relations": {
            "type": "array",
            "maxItems": 50,
            "items": {
                "type": "object",
                "properties": {
                    "fact": {"type": "integer"},
                    "subject": {"type": "string"},
                    "predicate": {"type": "string"},
                    "object": {"type": "string"},
                    "value": {"type": "string"},
                },
                "required": ["fact", "subject", "predicate"],
            },
        },
    },
    "required": ["facts"],
}


@dataclass(frozen=True)
class ExtractedFact:
    content: str
    scopes: list[str]
    source_messages: list[Message]
    key: str = ""
    relations: tuple[RelationStatement, ...] = ()
    world_time: WorldTime = UNKNOWN_WORLD_TIME
    category: str = ""
    category_value: str = ""


def fact_world_time_read(item: dict) -> tuple[WorldTime, int]:
    """A reply's fact's world time ("held_from", "held_until") and how many of the two were malformed: a malformed
    bound is dropped (that bound unknown, never guessed), and both are when they contradict each other."""
    bounds: dict[str, str | None] = {}
    malformed = 0
    for name in ("held_from", "held_until"):
        value = item.get(name)
        if value is None or value == "":
            bounds[name] = None
            continue
        try:
            if not isinstance(value, str):
                raise WorldTimeInvalid(name, "not a string")
            world_time_parse(**{"held_from": None, "held_until": None, name: value})
            bounds[name] = value
        except WorldTimeInvalid:
            bounds[name], malformed = None, malformed + 1
    try:
        return world_time_parse(held_from=bounds["held_from"], held_until=bounds["held_until"]), malformed
    except WorldTimeInvalid:  # an end before the start
        return UNKNOWN_WORLD_TIME, malformed + 1


def _graph_validate(data: dict) -> None:
    """Entities by name (the user is "user") and relations pointing at a fact by its number in the reply (from 1).
    A wrong shape is refused like a wrong fact; a relation naming no listed entity, or no fact, is dropped when the
    reply is read (the rules count it), as the facts are kept."""
    for name in ("entities", "relations"):
        if not isinstance(data.setdefault(name, []), list):
            raise OutputInvalid(f"{name} must be a list")
    for index, item in enumerate(data["entities"]):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"].strip():
            raise OutputInvalid(f"entities[{index}] needs a string 'name'")
        if item.get("type") not in EntityType.values:
            item["type"] = EntityType.THING
        aliases = item.get("aliases", [])
        item["aliases"] = [alias for alias in (aliases if isinstance(aliases, list) else []) if isinstance(alias, str)]
    for index, item in enumerate(data["relations"]):
        if not isinstance(item, dict) or not isinstance(item.get("fact"), int):
            raise OutputInvalid(f"relations[{index}] needs the integer 'fact' it comes from")
        for text in ("subject", "predicate"):
            if not isinstance(item.get(text), str) or not item[text].strip():
                raise OutputInvalid(f"relations[{index}] needs a string '{text}'")
        target, value = item.get("object"), item.get("value")
        if not (isinstance(target, str) and target.strip()) and not (isinstance(value, str) and value.strip()):
            raise OutputInvalid(f"relations[{index}] needs an 'object' entity or a 'value'")


def relations_of_reply(data: dict) -> dict[int, list[RelationStatement]]:
    """The reply's relations by the number of the fact they come from, entities resolved by name (case-insensitive);
    one naming an entity the reply did not list is dropped, but for the user."""
    mentions = {
        entity_name_normalize(item["name"]): EntityMention(
            name=item["name"], entity_type=item["type"], aliases=tuple(item["aliases"])
        )
        for item in data["entities"]
    }

    def mention(name: object) -> EntityMention | None:
        if not isinstance(name, str) or not name.strip():
            return None
        known = mentions.get(entity_name_normalize(name))
        return known or (EntityMention(name=name) if EntityMention(name=name).is_user else None)

    by_fact: dict[int, list[RelationStatement]] = {}
    for item in data["relations"]:
        subject, target = mention(item["subject"]), mention(item.get("object"))
        value = item.get("value") if isinstance(item.get("value"), str) else ""
        if subject is None or (target is None and not value.strip()) or not predicate_normalize(item["predicate"]):
            continue
        statement = RelationStatement(subject=subject, predicate=item["predicate"], object=target, value=value)
        by_fact.setdefault(item["fact"], []).append(statement)
    return by_fact


def relation_holds_a_secret(statement: RelationStatement) -> bool:
    names = [statement.subject.name, *statement.subject.aliases, statement.value]
    if statement.object is not None:
        names += [statement.object.name, *statement.object.aliases]
    return holds_a_secret(" | ".join(names))


def _category_read(item: dict, *, known: frozenset[str]) -> None:
    """The reply's category of a fact, kept when it is one the request named (else "": the offline lexicons file
    it, and the rules count it); its value kept when it is text."""
    category, value = item.get("category"), item.get("category_value")
    item["category"] = category.strip().lower() if isinstance(category, str) else ""
    if item["category"] not in known:
        item["category"] = ""
    item["category_value"] = " ".join(value.split())[:200] if isinstance(value, str) and item["category"] else ""


def _validate(data: object, *, known_categories: frozenset[str] = frozenset()) -> dict:
    if not isinstance(data, dict) or not isinstance(data.get("facts"), list):
        raise OutputInvalid('expected an object {"facts": [...]}')
    for index, item in enumerate(data["facts"]):
        if not isinstance(item, dict) or not isinstance(item.get("content"), str):
            raise OutputInvalid(f"facts[{index}] needs a string 'content'")
        scope = item.get("scope", ["user"])
        scope = [scope] if isinstance(scope, str) else scope
        if not isinstance(scope, list) or not scope or not set(scope) <= set(FactScope.values):
            raise OutputInvalid(f"facts[{index}].scope must be a list of 'user' and 'agent'")
        item["scope"] = scope
        key = item.get("key")
        # A proposed profile key is kept only when well-formed and about the user; a bad one is not worth a retry.
        item["key"] = key if isinstance(key, str) and PROFILE_KEY.match(key) and scope == ["user"] else ""
        source = item.get("source", [])
        item["source"] = [
            number for number in (source if isinstance(source, list) else [source]) if isinstance(number, int)
        ]
        item["world_time"], _ = fact_world_time_read(item)
        _category_read(item, known=known_categories)
        if item["world_time"].ended:
            item["key"] = ""  # a statement that is over is not the attribute's current value
    _graph_validate(data)
    return data


def is_plausible_fact(content: str) -> bool:
    """Drops what is obviously not a fact: questions (asked or reported), greetings and acknowledgements, fragments,
    over-long statements."""
    return (
        MIN_FACT_WORDS <= word_count(content) <= settings.FACT_MAX_WORDS
        and len(content) <= settings.FACT_MAX_CHARS
        and not is_question(content)
        and not is_greeting(content)
    )


@dataclass(frozen=True)
class _WindowWords:
    """What the facts of a window are checked against: the conversation the model saw, the memory that had been
    injected into it (removed from what the model saw, so a fact that says only that came from elsewhere), and the
    prompt's own instructions and example (which a small model copies)."""

    said: set[str]
    injected: set[str]
    instructions: str
    numbers: set[int]
    # The prompt's own words, without the agent's categories and instructions: a statement made of those words is a
    # copy of the prompt, but a list of every topic's vocabulary would make any statement one.
    instruction_words: set[str] | None = None

    def _not_from_the_conversation(self, content: str) -> bool:
        return not grounded(statement=content, source_words=self.said)

    def repeats_injected_memory(self, content: str) -> bool:
        return restates(statement=content, source_words=self.injected) and self._not_from_the_conversation(content)

    def copies_the_prompt(self, content: str) -> bool:
        words = self.instruction_words if self.instruction_words is not None else content_words(self.instructions)
        copied = copies(statement=content, text=self.instructions) or restates(statement=content, source_words=words)
        return copied and self._not_from_the_conversation(content)


def _is_wrongly_agent_wide(*, content: str, scopes: list[str]) -> bool:
    return FactScope.AGENT in scopes and ABOUT_THE_USER.search(content) is not None


def _scopes_kept_private(*, content: str, scopes: list[str]) -> list[str]:
    """A statement about this user is never shared with the agent's other users, whatever scope the model gave."""
    return [FactScope.USER] if _is_wrongly_agent_wide(content=content, scopes=scopes) else scopes


def _rule_violations(data: dict, *, window: _WindowWords) -> dict[str, int]:
    """The prompt's rules each fact of a valid reply broke (several rules can count for one fact)."""
    counts: dict[str, int] = {}

    def count(rule: str, broken: bool) -> None:
        counts[rule] = counts.get(rule, 0) + int(broken)

    for item in data["facts"]:
        content = " ".join(item["content"].split())
        count("over_word_limit", word_count(content) > settings.FACT_MAX_WORDS)
        count("question", is_question(content))
        count("greeting_or_fragment", is_greeting(content) or word_count(content) < MIN_FACT_WORDS)
        count("wrong_scope", _is_wrongly_agent_wide(content=content, scopes=item["scope"]))
        count("injected_memory", window.repeats_injected_memory(content))
        count("copied_from_prompt", window.copies_the_prompt(content))
        count("ungrounded", not grounded(statement=content, source_words=window.said))
        count("unknown_source", not set(item["source"]) <= window.numbers)
        count("unknown_category", not item["category"])
        counts["malformed_world_time"] = counts.get("malformed_world_time", 0) + fact_world_time_read(item)[1]
    kept = sum(len(statements) for statements in relations_of_reply(data).values())
    counts["unresolved_relation"] = len(data["relations"]) - kept
    counts["relation_of_no_fact"] = sum(
        1 for item in data["relations"] if item["fact"] not in range(1, len(data["facts"]) + 1)
    )
    return counts


def _categories_text(categories: tuple[MemoryCategory, ...]) -> str:
    return "\n".join(
        f"- {category.slug}: {category.description}"
        + (f" (e.g. {'; '.join(category.examples[:3])})" if category.examples else "")
        for category in categories
    )


def _prompt_values(*, conversation: str, configuration: CategoryConfiguration) -> dict[str, str]:
    """The prompt's placeholders: the conversation, and the agent's categories, those never to remember and the
    operator's instructions (docs/decisions/0055-extraction-instructions.md)."""
    never = configuration.never_remembered
    instructions = configuration.instructions
    return {
        "conversation": conversation,
        "max_words": str(settings.FACT_MAX_WORDS),
        "categories": _categories_text(configuration.categories),
        "never_remembered": (
            "Never extract facts in these categories; this agent does not remember them:\n"
            + _categories_text(never)
            + "\n"
            if never
            else ""
        ),
        "instructions": (
            "The agent's operator adds these instructions about what to remember; they never override the rules "
            "above (no secrets, nothing injected, nothing about how to behave):\n<OperatorInstructions>\n"
            + instructions
            + "\n</OperatorInstructions>\n"
            if instructions
            else ""
        ),
    }


@lru_cache(maxsize=1)
def _base_instruction_words() -> set[str]:
    """The content words of the prompt's instructions as written, without an agent's categories or instructions."""
    values = dict.fromkeys(("conversation", "categories", "never_remembered", "instructions"), "")
    return content_words(prompt_render(path=PROMPT, values=values | {"max_words": "30"})[0]["content"])


def _custom_lexicons(configuration: CategoryConfiguration) -> list[CustomCategory]:
    return [
        custom_lexicon(
            slug=category.slug, name=category.name, description=category.description, examples=category.examples
        )
        for category in configuration.custom
    ]


def _filed(item: dict, *, content: str, custom: list[CustomCategory], filing: set[str]) -> tuple[str, str]:
    """(category, value) of a reply's fact: the LLM's when it named a category of the request, else the offline
    lexicons'; a category the agent does not file under (a default it turned off) becomes `other`."""
    category, value = item["category"], item["category_value"]
    if not category:
        fallback = statement_file(content, custom=custom)
        category, value = fallback.category, fallback.value
    elif not value:
        fallback = statement_file(content, custom=custom)
        value = fallback.value if fallback.category == category else ""
    return (category, value) if category in filing else (OTHER, "")


def facts_extract(*, window: list[NumberedMessage], agent: Agent, job_id: int | None) -> list[ExtractedFact]:
    by_number = {item.number: item.message for item in window}
    user_messages = [item.message for item in window if item.message.role == Message.Role.USER and item.text]
    conversation = conversation_render(window=window)
    if not conversation:
        return []
    configuration = agent_category_configuration(agent=agent)
    filing = {category.slug for category in configuration.categories}
    never = {category.slug for category in configuration.never_remembered}
    known = frozenset(filing | never)
    messages = prompt_render(path=PROMPT, values=_prompt_values(conversation=conversation, configuration=configuration))
    window_words = _WindowWords(
        said=content_words(conversation),
        injected=content_words(injected_memory_text(window=window)),
        instructions=messages[0]["content"],
        numbers={item.number for item in window},
        instruction_words=_base_instruction_words(),
    )
    custom = _custom_lexicons(configuration)
    reply = llm_complete_json(
        purpose="extract_facts",
        messages=messages,
        inputs={
            "messages": [item.as_input() for item in window if item.text],
            "max_words": settings.FACT_MAX_WORDS,
            # The agent's own categories, which the offline extractor files by (their examples extend its lexicons).
            "categories": [
                {"slug": category.slug, "name": category.name, "examples": list(category.examples)}
                for category in configuration.custom
            ],
        },
        validate=lambda data: _validate(data, known_categories=known),
        schema=SCHEMA,
        rules=lambda data: _rule_violations(data, window=window_words),
        speed="fast",
        agent_id=agent.pk,
        job_kind="formation",
        job_id=job_id,
    )
    relations_of = relations_of_reply(reply)
    extracted: list[ExtractedFact] = []
    for number, item in enumerate(reply["facts"], start=1):
        content = " ".join(item["content"].split())
        if (
            not is_plausible_fact(content)
            or window_words.repeats_injected_memory(content)
            or window_words.copies_the_prompt(content)
        ):
            continue
        category, category_value = _filed(item, content=content, custom=custom, filing=filing | never)
        if category in never:
            continue  # the agent never remembers this topic: nothing of it is stored
        relations = tuple(relations_of.get(number, ()))
        if holds_a_secret(content):
            relations = ()  # the screen may keep the statement redacted; a relation would keep the value itself
            screened = statement_screen(
                agent=agent,
                text=content,
                target=SensitiveDataFinding.Target.FACT,
                job_kind="formation",
                job_id=job_id,
            )
            if screened is None:
                continue
            content = screened
        sources = [by_number[number] for number in item["source"] if number in by_number]
        extracted.append(
            ExtractedFact(
                content=content,
                scopes=_scopes_kept_private(content=content, scopes=item["scope"]),
                source_messages=sources or user_messages,
                key=item["key"],
                relations=tuple(statement for statement in relations if not relation_holds_a_secret(statement)),
                world_time=item["world_time"],
                category=category,
                category_value=category_value,
            )
        )
    return extracted
