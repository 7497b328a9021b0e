"""The entries a list question asks for (facts.grammar.list_questions): the current facts of the categories it names,
about the person it names, grouped one entry per canonical value (Fact.category_value, or the fact alone when it has
none), read through the partial index (agent, user, category) of current filed facts. Fact search fuses them as a
signal (facts_list_ranking); turn search fuses the turns they were formed from (messages_list_ranking, which
conversations.selectors.message_search is given, as it is given the graph's ranking).

The person: a name the question gives must be the statement's subject (it opens the statement: "Melanie went camping",
"Melanie's kids love dinosaurs"), not any mention ("Jon plans to work with Gina" is not one of Gina's plans); a
question about the user, or naming no one, reads every statement of the categories.

A question that narrows what it lists ("What LGBTQ+ events ...", "activities ... with her family") keeps the entries
that say something its narrowing words ask for (facts.grammar.list_questions.narrowing_matched), when any does: the
person's whole category would otherwise push the answer out (docs/decisions/0067-list-narrowing-words.md)."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q
from django.utils import timezone

from core.search.listing import entries_interleaved
from facts.grammar.list_questions import ListQuestion, list_question_read, narrowing_matched
from facts.models import Fact, FactScope

# The newest facts of the categories read for one question: a list question's answer is a person's few dozen
# entries; the bound keeps the read one short index range whatever the store's size.
LIST_MAX_FACTS = 300


@dataclass(frozen=True)
class ListEntry:
    category: str
    ids: list[int]  # its facts (or their turns), newest first


def _facts_listed(*, agent_id: int, user_id: int | None, question: ListQuestion) -> list[tuple[int, str, str, str]]:
    """(fact id, category, entry key, content) of the current facts of the question's categories about its people,
    newest first: the user's own and the agent-wide ones."""
    visible = Q(user__isnull=True, scopes__contains=[FactScope.AGENT])
    if user_id is not None:
        visible |= Q(user_id=user_id)
    facts = Fact.objects.filter(
        visible,
        Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()),
        agent_id=agent_id,
        valid_to__isnull=True,
        category__in=question.categories,
    )
    if question.people and not question.about_the_user:
        named = "|".join(re.escape(name) for name in question.people)
        facts = facts.filter(content__iregex=rf"^({named})(\M|'s)")
    rows = facts.order_by("-valid_from", "-id").values_list("pk", "category", "category_value", "lineage", "content")
    return [
        (pk, category, f"value:{value.strip().casefold()}" if value.strip() else f"fact:{lineage}", content)
        for pk, category, value, lineage, content in rows[:LIST_MAX_FACTS]
    ]


def _grouped(rows: list[tuple[int, str, str, str]], question: ListQuestion) -> list[ListEntry]:
    """One entry per (category, key), in the order of the question's categories, newest first within each; only the
    entries a member of which matches the question's narrowing words, when any does."""
    members: dict[tuple[str, str], list[int]] = defaultdict(list)
    narrowed: set[tuple[str, str]] = set()
    for pk, category, key, content in rows:
        members[(category, key)].append(pk)
        if narrowing_matched(content, question.narrowing):
            narrowed.add((category, key))
    rank = {category: place for place, category in enumerate(question.categories)}
    ordered = sorted(members.items(), key=lambda item: rank[item[0][0]])
    if narrowed:
        ordered = [(key, ids) for key, ids in ordered if key in narrowed]
    return [ListEntry(category=category, ids=ids) for (category, _), ids in ordered]


def facts_list_entries(*, agent_id: int, user_id: int | None, query: str) -> list[ListEntry]:
    """The entries a list question asks for, each with its facts; nothing when the query is not one."""
    question = list_question_read(query)
    if question is None:
        return []
    return _grouped(_facts_listed(agent_id=agent_id, user_id=user_id, question=question), question)


@dataclass(frozen=True)
class ListedFact:
    fact_id: int
    label: str  # why it was returned: "list:<its category>"
    valid_from: datetime


def facts_list_ranking(
    *, agent_id: int, user_id: int | None, query: str, scores: Mapping[int, float], limit: int
) -> list[ListedFact]:
    """Fact search's list signal: for a list question, up to `limit` of its entries' facts, best first
    (core.search.listing.entries_interleaved: entries by their best fused score, every entry's best fact before any
    entry's second); nothing when the query is not a list question."""
    entries = facts_list_entries(agent_id=agent_id, user_id=user_id, query=query)
    if not entries:
        return []
    category_of = {pk: entry.category for entry in entries for pk in entry.ids}
    chosen = entries_interleaved(entries=[entry.ids for entry in entries], scores=scores, limit=limit)
    valid_from = dict(Fact.objects.filter(pk__in=chosen).values_list("pk", "valid_from"))
    return [
        ListedFact(fact_id=pk, label=f"list:{category_of[pk]}", valid_from=valid_from[pk])
        for pk in chosen
        if pk in valid_from
    ]


def messages_list_ranking(*, agent_id: int, user_id: int, query: str) -> list[tuple[str, list[int]]]:
    """For turn search (its `list_ranking`): the entries a list question asks for, each as its category and the ids of
    the turns its facts were formed from (their source messages), newest fact first; nothing when the query is not a
    list question. The caller keeps the turns in its own scope."""
    entries = facts_list_entries(agent_id=agent_id, user_id=user_id, query=query)
    if not entries:
        return []
    sources: dict[int, list[int]] = defaultdict(list)
    links = Fact.source_messages.through.objects.filter(fact_id__in=[pk for entry in entries for pk in entry.ids])
    for fact_id, message_id in links.order_by("message_id").values_list("fact_id", "message_id"):
        sources[fact_id].append(message_id)
    listed = [
        (entry.category, list(dict.fromkeys(message for pk in entry.ids for message in sources[pk])))
        for entry in entries
    ]
    return [(category, messages) for category, messages in listed if messages]
