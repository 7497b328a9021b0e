"""A question about the user that asks for one of their single-valued slots (employer, job, home, partner): the facts
that state that slot (by a relation of the user's, or a profile key) outrank those that only share the question's
words, on real PostgreSQL with the real embedding model."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import override_settings

from facts.grammar.slots import EMPLOYER, HOME, JOB, PARTNER, RELATIONSHIP, question_slots
from facts.models import EntityType
from facts.selectors import facts_search
from facts.services.facts import fact_create
from facts.services.graph import EntityMention, RelationStatement
from tests.facts.search_support import FILLER, fact_stating

USER = EntityMention(name="user")


@pytest.mark.parametrize(
    "question, slots",
    [
        ("Where does the user work now?", {EMPLOYER, JOB}),
        ("What does the user do for a living these days?", {EMPLOYER, JOB}),
        ("Which city does the user live in?", {HOME}),
        ("Who is the user's partner these days?", {PARTNER, RELATIONSHIP}),
        ("Where does Dana work?", set()),  # not about the user (a name is read as the user's before this)
        ("Does the user like horror films?", set()),
        ("Did the user's partner move to another city?", set()),  # two families: none
    ],
)
def test_a_question_names_the_slots_it_asks_for(question, slots):
    assert question_slots(question) == slots


@pytest.fixture
def work_and_swimming(agent, end_user):
    ledgerly = EntityMention(name="Ledgerly", entity_type=EntityType.ORGANISATION)
    employer = fact_stating(
        agent, end_user, "The user co-runs Ledgerly.", RelationStatement(USER, "works_at", ledgerly)
    )
    fact_create(agent=agent, user=end_user, scopes=["user"], content="The user swims every morning before work.")
    for content in FILLER:
        fact_create(agent=agent, user=end_user, scopes=["user"], content=content)
    return employer


def _scores(agent, user, query: str) -> dict[str, float]:
    hits = facts_search(agent=agent, user=user, query=query, top_k=20, record_access=False)
    return {hit.fact.content: hit.score for hit in hits}


@pytest.mark.django_db
def test_the_facts_stating_the_slot_asked_for_are_boosted_and_no_other(agent, end_user, work_and_swimming):
    with override_settings(MEMORY_SLOT_BOOST=0.0):
        plain = _scores(agent, end_user, "Which company does the user work for?")
    boosted = _scores(agent, end_user, "Which company does the user work for?")

    assert boosted["The user co-runs Ledgerly."] == pytest.approx(
        (1 + settings.MEMORY_SLOT_BOOST) * plain["The user co-runs Ledgerly."]
    )
    assert {content: score for content, score in boosted.items() if content != "The user co-runs Ledgerly."} == {
        content: pytest.approx(score) for content, score in plain.items() if content != "The user co-runs Ledgerly."
    }


@pytest.mark.django_db
def test_a_question_about_another_slot_boosts_nothing(agent, end_user, work_and_swimming):
    with override_settings(MEMORY_SLOT_BOOST=0.0):
        plain = _scores(agent, end_user, "Which city does the user live in?")
    assert _scores(agent, end_user, "Which city does the user live in?") == pytest.approx(plain)
