"""A person's profile, two reads of their current facts:

- `user_profile`: the facts that carry a key, read as key → value (expired ones left out);
- `profile_by_category`: what memory holds of them by topic (docs/decisions/0057-the-profile.md): per category, one
  entry per canonical value (`Fact.category_value`, or the fact itself when it has none), each with its source facts,
  its time in the world (its newest fact's that still stands, else its newest fact's) and when it was last mentioned.
  A statement stands while it holds today, and an event (said as one time) always: it happened. An entry none of
  whose facts stands is history (a state that ended): shown only when asked for. Only current versions are
  read (a corrected version was never true; an ended statement stays current memory, ended in the world), and only
  filed ones (an empty category is memory formed before categories). One indexed statement
  (the partial index fact_current_category)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

from django.db.models import Q
from django.utils import timezone

from agents.models import Agent, EndUser
from agents.selectors.categories import agent_categories
from core.exceptions import ApplicationError
from facts.models import Fact, FactScope
from facts.world_time import WorldTime

# At most this many facts are read for one profile (newest first), and this many source facts shown per entry: a
# profile is what memory holds at a glance, and its read stays one bounded index range whatever the store's size.
PROFILE_MAX_FACTS = 2000
PROFILE_SOURCES_PER_ENTRY = 5
_ROW = (
    "pk",
    "category",
    "category_value",
    "content",
    "lineage",
    "version",
    "valid_from",
    "held_from",
    "held_from_precision",
    "held_until",
    "held_until_precision",
)


@dataclass(frozen=True)
class ProfileEntry:
    key: str
    value: str
    fact_id: int
    version: int
    expires_at: datetime | None = None


def user_profile(*, agent: Agent, user: EndUser) -> dict[str, ProfileEntry]:
    """The value is the one given when the attribute was set (imports, the API, tools), else the fact's statement."""
    unexpired = Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now())
    facts = Fact.objects.filter(unexpired, agent=agent, user=user, valid_to__isnull=True).exclude(key="")
    return {
        fact.key: ProfileEntry(
            key=fact.key,
            value=str(fact.metadata.get("value") or fact.content),
            fact_id=fact.pk,
            version=fact.version,
            expires_at=fact.expires_at,
        )
        for fact in facts.order_by("key").only("key", "content", "metadata", "version", "expires_at")
    }


@dataclass(frozen=True)
class ProfileSource:
    """A source fact of an entry, as a profile shows it: its id (`pk` too, as a fact's), statement, version, when
    memory recorded it and its world time."""

    pk: int
    content: str
    version: int
    valid_from: datetime
    world_time: WorldTime


@dataclass
class CategoryEntry:
    """One value of a category: its source facts newest first (at most PROFILE_SOURCES_PER_ENTRY; `mentions` counts
    them all), its world time and whether it stands (holds today, or happened as an event: `stands`), and when it
    was last mentioned (the newest source's valid_from: when memory recorded it)."""

    category: str
    value: str
    facts: list[ProfileSource] = field(default_factory=list)
    mentions: int = 0
    world_time: WorldTime = field(default_factory=WorldTime)
    stands: bool = False
    last_mentioned: datetime | None = None


@dataclass(frozen=True)
class CategoryProfile:
    """Entries by category (in the order `categories` was given), most recently mentioned first; `history` holds the
    ended entries when they were asked for, else nothing."""

    current: dict[str, list[CategoryEntry]]
    history: dict[str, list[CategoryEntry]]
    truncated: bool  # more than PROFILE_MAX_FACTS facts: the oldest were left out


def _stands(world: WorldTime, today: date) -> bool:
    """Whether a statement still stands in a profile: it holds today, or it is an event (said as one time: "went
    camping on 3 May"), which stays what happened; a state that ended ("used to work at Globex") is history."""
    return world.holds_on(today) or world.is_event


def profile_by_category(
    *,
    agent: Agent,
    user: EndUser | None,
    categories: Collection[str],
    include_history: bool = False,
    today: date | None = None,
    max_facts: int = PROFILE_MAX_FACTS,
) -> CategoryProfile:
    """The profile of `user` (their own facts), or with `user` None the agent-wide one (facts visible to every user),
    over the given categories (the caller validates them: agents.selectors.categories)."""
    today = today or timezone.now().date()
    unexpired = Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now())
    facts = Fact.objects.filter(unexpired, agent=agent, valid_to__isnull=True, category__in=list(categories))
    if user is not None:
        facts = facts.filter(user=user)
    else:
        facts = facts.filter(user__isnull=True, scopes__contains=[FactScope.AGENT])
    # A keyed fact (home_city, employer) is the profile's attribute, listed apart: not an entry a second time.
    facts = facts.filter(key="")
    # Plain rows and small records, not model instances: at a thousand facts a person, instances were most of a read.
    rows = list(facts.exclude(category="").order_by("-valid_from", "-id").values_list(*_ROW)[: max_facts + 1])
    truncated = len(rows) > max_facts
    entries: dict[tuple[str, str], CategoryEntry] = {}
    for row in rows[:max_facts]:
        pk, category, value, content, lineage, version, valid_from, start, start_precision, end, end_precision = row
        key = f"value:{value.strip().casefold()}" if value.strip() else f"fact:{lineage}"
        entry = entries.get((category, key))
        if entry is None:
            entry = entries[(category, key)] = CategoryEntry(category=category, value=value.strip() or content)
            entry.last_mentioned = valid_from
        entry.mentions += 1
        world = WorldTime(start=start, start_precision=start_precision, end=end, end_precision=end_precision)
        if len(entry.facts) < PROFILE_SOURCES_PER_ENTRY:
            entry.facts.append(
                ProfileSource(pk=pk, content=content, version=version, valid_from=valid_from, world_time=world)
            )
        holds = _stands(world, today)
        # The newest fact that still stands gives the entry its time; failing that, the newest one.
        if (holds and not entry.stands) or entry.mentions == 1:
            entry.world_time, entry.stands = world, holds
    current: dict[str, list[CategoryEntry]] = {category: [] for category in categories}
    history: dict[str, list[CategoryEntry]] = {category: [] for category in categories} if include_history else {}
    for entry in entries.values():
        if entry.stands:
            current[entry.category].append(entry)
        elif include_history:
            history[entry.category].append(entry)
    return CategoryProfile(current=current, history=history, truncated=truncated)


class CategoryUnknown(ApplicationError):
    """A category asked for that the agent does not file under (agents.selectors.categories)."""

    def __init__(self, *, slug: str, known: Sequence[str]) -> None:
        super().__init__(
            f"Unknown category {slug!r}.",
            fields={"category": [f"not one of this agent's categories: {', '.join(known)}"]},
        )
        self.slug = slug
        self.known = tuple(known)


@dataclass(frozen=True)
class ProfileSection:
    category: str
    name: str
    entries: list[CategoryEntry]
    history: list[CategoryEntry]  # empty unless history was asked for


@dataclass(frozen=True)
class ProfileSections:
    sections: list[ProfileSection]  # only the categories with an entry (or, asked for, an ended one)
    truncated: bool


def profile_sections(
    *,
    agent: Agent,
    user: EndUser | None,
    categories: Sequence[str] | None = None,
    include_history: bool = False,
) -> ProfileSections:
    """The profile as every reader shows it (the API, the tool, the console, the context block): the asked
    categories in the order asked, else all of the agent's in its order; an unknown one raises CategoryUnknown."""
    known = {category.slug: category for category in agent_categories(agent=agent)}
    asked = list(dict.fromkeys(categories or known))
    if unknown := [slug for slug in asked if slug not in known]:
        raise CategoryUnknown(slug=unknown[0], known=list(known))
    profile = profile_by_category(agent=agent, user=user, categories=asked, include_history=include_history)
    sections = [
        ProfileSection(
            category=slug,
            name=known[slug].name,
            entries=profile.current[slug],
            history=profile.history.get(slug, []) if include_history else [],
        )
        for slug in asked
    ]
    return ProfileSections(
        sections=[section for section in sections if section.entries or section.history], truncated=profile.truncated
    )
