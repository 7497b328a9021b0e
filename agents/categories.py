"""The categories memory files statements under (docs/decisions/0052-memory-categories.md): every fact and relation
belongs to exactly one, so that a person's memory can be read by topic (the profile, list questions). The default set
below; an agent may add its own or replace them, and name some never to remember (agents.selectors.categories)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.safety.injection import injection_finding
from core.safety.sensitive import sensitive_findings

# A category's slug: what the API, the LLM's reply and the database carry.
CATEGORY_SLUG_PATTERN = r"^[a-z][a-z0-9_]{0,49}$"
MAX_CATEGORY_SLUG_LENGTH = 50
# What a statement fits in no other category is filed under.
OTHER = "other"


@dataclass(frozen=True)
class MemoryCategory:
    slug: str
    name: str
    description: str
    examples: tuple[str, ...] = field(default=())
    is_default: bool = True


DEFAULT_CATEGORIES: tuple[MemoryCategory, ...] = (
    MemoryCategory(
        "identity",
        "Identity",
        "Who the person is: name, age, birthday, gender and identity, nationality, origin, languages, appearance.",
        ("Caroline is a transgender woman.", "The user was born in Sweden.", "The user speaks Portuguese."),
    ),
    MemoryCategory(
        "relationships",
        "People and relationships",
        "Family, partner, friends, colleagues and others in the person's life, and how they stand with them.",
        ("Maria is the user's sister.", "The user is married to Tom.", "The user has three kids."),
    ),
    MemoryCategory(
        "work",
        "Work and education",
        "Jobs, employers, roles, careers, studies, schools, degrees, skills learned for work.",
        ("The user works as a nurse.", "The user started a new job at Initech.", "Gina studies law."),
    ),
    MemoryCategory(
        "places",
        "Home and places",
        "Where the person lives and has lived, travelled, visited or wants to go.",
        ("The user lives in Denver.", "Melanie went camping at the beach.", "The user visited Paris in 2022."),
    ),
    MemoryCategory(
        "activities",
        "Activities and hobbies",
        "What the person does for its own sake: sports, hobbies, crafts, arts, games, volunteering, reading.",
        ("Melanie does pottery.", "The user runs marathons.", "Caroline paints landscapes."),
    ),
    MemoryCategory(
        "likes",
        "Likes and preferences",
        "What the person likes, loves or prefers: food, music, books, films, brands, favourites.",
        ("The user loves Italian food.", "The user's favourite band is Radiohead.", "Jon prefers tea."),
    ),
    MemoryCategory(
        "dislikes",
        "Dislikes and avoidances",
        "What the person dislikes, avoids, fears or does not eat.",
        ("The user hates horror films.", "The user is vegetarian.", "The user avoids flying."),
    ),
    MemoryCategory(
        "health",
        "Health",
        "Physical and mental health: conditions, allergies, injuries, medication, therapy, diet for health.",
        ("The user is allergic to peanuts.", "The user has asthma.", "Evan injured his knee."),
    ),
    MemoryCategory(
        "possessions",
        "Possessions and pets",
        "What the person owns and the animals they keep: pets, cars, homes owned, collections, instruments.",
        ("The user has a dog named Luna.", "The user owns a red bike.", "Andrew adopted a cat."),
    ),
    MemoryCategory(
        "plans",
        "Plans and goals",
        "What the person intends, hopes or is working towards: trips planned, goals, ambitions, upcoming events.",
        ("The user plans to move to Berlin.", "The user wants to run a marathon.", "Caroline hopes to adopt."),
    ),
    MemoryCategory(
        "events",
        "Events and experiences",
        "Things that happened to or were done by the person once: milestones, trips taken, celebrations, incidents.",
        ("The user got married in June.", "Melanie went to a concert last week.", "The user's car broke down."),
    ),
    MemoryCategory(
        "beliefs",
        "Beliefs and values",
        "What the person believes or cares about: faith, politics, causes, principles, opinions about the world.",
        ("The user is Buddhist.", "Caroline supports LGBTQ rights.", "The user values honesty."),
    ),
    MemoryCategory(
        OTHER,
        "Other",
        "Anything worth remembering that fits no other category.",
        (),
    ),
)
DEFAULT_CATEGORY_SLUGS = tuple(category.slug for category in DEFAULT_CATEGORIES)

# An agent's own configuration (docs/decisions/0054-per-agent-categories.md, 0055-extraction-instructions.md).
MAX_CUSTOM_CATEGORIES = 20
MAX_CATEGORY_NAME_LENGTH = 100
MAX_CATEGORY_DESCRIPTION_LENGTH = 300
MAX_CATEGORY_EXAMPLES = 10
MAX_CATEGORY_EXAMPLE_LENGTH = 200
MAX_EXTRACTION_INSTRUCTIONS_LENGTH = 2000
_SLUG = re.compile(CATEGORY_SLUG_PATTERN)


def custom_categories_read(value: object) -> tuple[MemoryCategory, ...]:
    """An agent's stored `memory_categories` as categories (already validated when it was set)."""
    if not isinstance(value, list):
        return ()
    return tuple(
        MemoryCategory(
            slug=item["slug"],
            name=item.get("name") or item["slug"].replace("_", " ").capitalize(),
            description=item.get("description", ""),
            examples=tuple(item.get("examples", ())),
            is_default=False,
        )
        for item in value
        if isinstance(item, dict) and isinstance(item.get("slug"), str)
    )


def _custom_category_errors(value: object, *, default_categories_enabled: bool) -> list[str]:
    if not isinstance(value, list):
        return ["must be a list of categories."]
    if len(value) > MAX_CUSTOM_CATEGORIES:
        return [f"at most {MAX_CUSTOM_CATEGORIES} categories."]
    errors: list[str] = []
    seen: set[str] = set()
    for index, item in enumerate(value):
        where = f"[{index}]"
        if not isinstance(item, dict) or set(item) - {"slug", "name", "description", "examples"}:
            errors.append(f"{where}: an object with slug, and optionally name, description and examples.")
            continue
        slug = item.get("slug")
        if not isinstance(slug, str) or not _SLUG.match(slug):
            errors.append(f"{where}.slug: lowercase letters, digits and _, starting with a letter, at most 50.")
            continue
        if slug in seen or slug == OTHER or (default_categories_enabled and slug in DEFAULT_CATEGORY_SLUGS):
            errors.append(f"{where}.slug: '{slug}' is already a category.")
        seen.add(slug)
        for name, cap in (("name", MAX_CATEGORY_NAME_LENGTH), ("description", MAX_CATEGORY_DESCRIPTION_LENGTH)):
            text = item.get(name, "")
            if not isinstance(text, str) or len(text) > cap:
                errors.append(f"{where}.{name}: text of at most {cap} characters.")
            elif _screen_error(text):
                errors.append(f"{where}.{name}: {_screen_error(text)}")
        examples = item.get("examples", [])
        if not isinstance(examples, list) or len(examples) > MAX_CATEGORY_EXAMPLES:
            errors.append(f"{where}.examples: a list of at most {MAX_CATEGORY_EXAMPLES} statements.")
            continue
        for number, example in enumerate(examples):
            if not isinstance(example, str) or not example.strip() or len(example) > MAX_CATEGORY_EXAMPLE_LENGTH:
                errors.append(f"{where}.examples[{number}]: a statement of at most {MAX_CATEGORY_EXAMPLE_LENGTH}.")
            elif _screen_error(example):
                errors.append(f"{where}.examples[{number}]: {_screen_error(example)}")
    return errors


def _screen_error(text: str) -> str:
    """Why operator text that reaches the extraction prompt is refused: it reads as an injection (core.safety.
    injection, the rules memory itself is screened by) or holds a secret (core.safety.sensitive); "" when it is fine."""
    finding = injection_finding(text)
    if finding is not None:
        return f"reads as an instruction to the model ({finding.rule}): refused."
    if sensitive_findings(text):
        return "holds a secret: refused."
    return ""


def category_settings_errors(
    *,
    memory_categories: object,
    default_categories_enabled: bool,
    categories_never_remembered: object,
    extraction_instructions: object,
) -> dict[str, list[str]]:
    """What is wrong with an agent's category settings, by field (empty: nothing). The admin's form and the
    administration API both refuse what this names, so nothing stored changes."""
    errors: dict[str, list[str]] = {}
    custom = _custom_category_errors(memory_categories, default_categories_enabled=default_categories_enabled)
    if custom:
        errors["memory_categories"] = custom
    known = {OTHER, *(DEFAULT_CATEGORY_SLUGS if default_categories_enabled else ())}
    if not custom:
        known |= {category.slug for category in custom_categories_read(memory_categories)}
    never = categories_never_remembered
    if not isinstance(never, list) or not all(isinstance(slug, str) for slug in never):
        errors["categories_never_remembered"] = ["must be a list of category slugs."]
    elif len(never) > len(DEFAULT_CATEGORIES) + MAX_CUSTOM_CATEGORIES:
        errors["categories_never_remembered"] = ["too many categories."]
    elif unknown := [slug for slug in never if slug not in known]:
        errors["categories_never_remembered"] = [f"unknown categories: {', '.join(sorted(set(unknown)))}."]
    elif OTHER in never:
        errors["categories_never_remembered"] = ["'other' is where what fits nowhere goes: it cannot be dropped."]
    if not isinstance(extraction_instructions, str):
        errors["extraction_instructions"] = ["must be text."]
    elif len(extraction_instructions) > MAX_EXTRACTION_INSTRUCTIONS_LENGTH:
        errors["extraction_instructions"] = [f"at most {MAX_EXTRACTION_INSTRUCTIONS_LENGTH} characters."]
    elif reason := _screen_error(extraction_instructions):
        errors["extraction_instructions"] = [reason]
    return errors
