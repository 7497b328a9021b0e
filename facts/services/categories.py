"""Filing facts under their category with a value canonical for their person (docs/decisions/0053-category-lexicons-
and-canonical-values.md): formation files what it wrote with the LLM's category (or the lexicons'), importers what
they imported, the file_fact_categories command the facts formed before categories existed."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from django.db import transaction
from django.db.models import OuterRef, Q, Subquery

from agents.categories import OTHER
from agents.models import Agent
from agents.selectors.categories import agent_category_configuration
from facts.grammar.categories import custom_lexicon, statement_file, value_canonical
from facts.models import Fact, Relation

Scope = tuple[int, int | None, str]


@dataclass(frozen=True)
class Filing:
    fact: Fact
    category: str
    value: str


def _known_values(filings: Sequence[Filing]) -> dict[Scope, list[str]]:
    """The values each person (and agent-wide memory) already has in each category the filings name, in one read:
    a new value naming the same thing becomes the one already there."""
    scopes = {(filing.fact.agent_id, filing.fact.user_id, filing.category) for filing in filings if filing.value}
    known: dict[Scope, list[str]] = defaultdict(list)
    if not scopes:
        return known
    condition = Q()
    for agent_id, user_id, category in scopes:
        condition |= Q(agent_id=agent_id, user_id=user_id, category=category)
    rows = (
        Fact.objects.filter(condition, valid_to__isnull=True)
        .exclude(category_value="")
        .exclude(pk__in=[filing.fact.pk for filing in filings])
        .values_list("agent_id", "user_id", "category", "category_value")
        .order_by("formed_at")
        .distinct()
    )
    for agent_id, user_id, category, value in rows:
        if value not in known[(agent_id, user_id, category)]:
            known[(agent_id, user_id, category)].append(value)
    return known


def facts_file(*, filings: Sequence[Filing]) -> list[Fact]:
    """Sets each fact's category and its value, the value made canonical within the category and the person
    (facts.grammar.categories.value_canonical against the values they already have and those filed before it
    here); one read and one UPDATE. Returns the facts whose filing changed."""
    known = _known_values(filings)
    changed = []
    for filing in filings:
        scope = (filing.fact.agent_id, filing.fact.user_id, filing.category)
        values = known[scope]
        value = value_canonical(category=filing.category, value=filing.value, known=values) if filing.value else ""
        if value and value not in values:
            values.append(value)
        if (filing.fact.category, filing.fact.category_value) != (filing.category, value):
            filing.fact.category, filing.fact.category_value = filing.category, value[:200]
            changed.append(filing.fact)
    if changed:
        Fact.objects.bulk_update(changed, ["category", "category_value"])
    return changed


def facts_values_canonical(facts: Iterable[Fact]) -> list[Fact]:
    """The values of facts filed as they were written (an import's), made canonical for their person."""
    return facts_file(filings=[Filing(fact=fact, category=fact.category, value=fact.category_value) for fact in facts])


def facts_file_unfiled(*, agent: Agent, batch_size: int = 500) -> Iterator[int]:
    """Files the agent's facts formed before categories (empty category, every version) with the offline lexicons
    and the agent's own categories, in batches by id, and their relations with their fact's category; yields how
    many facts each batch filed. Idempotent: a filed fact is never read again."""
    configuration = agent_category_configuration(agent=agent)
    custom = [
        custom_lexicon(slug=item.slug, name=item.name, description=item.description, examples=item.examples)
        for item in configuration.custom
    ]
    filing_to = {category.slug for category in (*configuration.categories, *configuration.never_remembered)}
    after = 0
    while True:
        batch = list(Fact.objects.filter(agent=agent, category="", pk__gt=after).order_by("pk")[:batch_size])
        if not batch:
            return
        after = batch[-1].pk
        filings = []
        for fact in batch:
            filed = statement_file(fact.content, custom=custom)
            category = filed.category if filed.category in filing_to else OTHER
            filings.append(
                Filing(fact=fact, category=category, value=filed.value if category == filed.category else "")
            )
        with transaction.atomic():
            facts_file(filings=filings)
            relations_file(fact_ids=[fact.pk for fact in batch])
        yield len(batch)


def relations_file(*, fact_ids: Sequence[int]) -> int:
    """Relations without a category take the category of the fact that states them (the first, if several)."""
    first_fact = Subquery(
        Fact.objects.filter(relations=OuterRef("pk"), pk__in=fact_ids).order_by("pk").values("category")[:1]
    )
    return Relation.objects.filter(category="", source_facts__in=fact_ids).distinct().update(category=first_fact)
