"""The categories memory files statements under (docs/decisions/0052-memory-categories.md): every fact and relation
belongs to exactly one, so that a person's memory can be read by topic (the profile, list questions). The default set
below; an agent may add its own or replace them, and name some never to remember (agents.selectors.categories)."""

from __future__ import annotations

from dataclasses import dataclass, field

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
