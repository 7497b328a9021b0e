"""Formation files what it stores under the agent's categories (docs/decisions/0053-0055): through the scripted LLM
at the provider interface (the prompt carries the agent's categories, those never remembered and its instructions;
what the LLM returns in a dropped category is not stored) and offline (an agent's own categories' examples extend
the lexicons)."""

from __future__ import annotations

import pytest

from core.llm.providers import set_llm_provider_override
from core.models import LLMCall
from facts.models import Fact, Relation
from formation.offline.provider import OfflineLLM
from tests.factories import AgentFactory
from tests.formation_support import formation_run, user_says

ORDERS = {
    "slug": "orders",
    "name": "Orders",
    "description": "What the user bought from the shop, and returned.",
    "examples": ["The user ordered a blue kettle.", "The user returned the toaster."],
}


def _fact(content: str, category: str | None = None, value: str = "", **extra) -> dict:
    item = {"content": content, "scope": ["user"], "source": [1], **extra}
    if category is not None:
        item |= {"category": category, "category_value": value}
    return item


def _all_added(request) -> dict:
    """A reconciliation reply adding every new fact (the facts of these tests are all new)."""
    return {
        "decisions": [
            {"new": fact["number"], "action": "ADD", "target": None, "content": None, "reason": "new"}
            for fact in request.inputs["new_facts"]
        ]
    }


def _filed(agent) -> list[tuple[str, str, str]]:
    return sorted(
        Fact.objects.filter(agent=agent, valid_to__isnull=True).values_list("content", "category", "category_value")
    )


@pytest.mark.django_db
def test_the_prompt_carries_the_agents_categories_instructions_and_what_it_never_remembers(scripted_llm):
    agent = AgentFactory(
        memory_categories=[ORDERS],
        categories_never_remembered=["health"],
        extraction_instructions="Remember the brands the user prefers.",
    )
    session = user_says(agent, "I ordered a kettle from you and I am allergic to peanuts.")
    scripted_llm.script(
        "extract_facts",
        {
            "facts": [
                _fact("The user ordered a kettle from the shop.", "orders", "kettle"),
                _fact("The user is allergic to peanuts.", "health", "peanuts"),
            ]
        },
    )

    job = formation_run(session)

    request = scripted_llm.calls("extract_facts")[0]
    system = request.messages[0]["content"]
    assert "- orders: What the user bought from the shop, and returned. (e.g. The user ordered a blue kettle." in system
    assert "- activities: " in system and "- other: " in system
    assert "Never extract facts in these categories" in system and "- health: " in system.split("Never")[1]
    assert "<OperatorInstructions>\nRemember the brands the user prefers.\n</OperatorInstructions>" in system
    # What the LLM filed in a category the agent never remembers is not stored.
    assert job.facts_added == 1
    assert _filed(agent) == [("The user ordered a kettle from the shop.", "orders", "kettle")]


@pytest.mark.django_db
def test_a_missing_or_unknown_category_falls_back_to_the_lexicons_and_counts_as_a_rule_violation(agent, scripted_llm):
    session = user_says(agent, "I carve little birds out of driftwood and my sister Ana lives in Porto.")
    scripted_llm.script(
        "extract_facts",
        {
            "facts": [
                _fact("The user carves little birds out of driftwood."),
                _fact("The user's sister Ana lives in Porto.", "family_stuff", "ana"),
            ]
        },
    )

    formation_run(session)

    assert _filed(agent) == [
        ("The user carves little birds out of driftwood.", "activities", "woodcarving"),
        ("The user's sister Ana lives in Porto.", "relationships", "sister"),
    ]
    call = LLMCall.objects.get(agent=agent, purpose="extract_facts")
    assert call.rule_violations["unknown_category"] == 2


@pytest.mark.django_db
def test_values_are_made_canonical_within_a_category_and_a_person(agent, scripted_llm):
    first = user_says(agent, "I took a pottery class and I love Thai food.", session="s1")
    scripted_llm.script(
        "extract_facts",
        {
            "facts": [
                _fact("The user took a pottery class.", "activities", "pottery class"),
                _fact("The user loves Thai food.", "likes", "Thai food"),
            ]
        },
    )
    formation_run(first)
    second = user_says(agent, "Making pots calms me down. Thai food dishes are the best.", session="s2")
    scripted_llm.script(
        "extract_facts",
        {
            "facts": [
                _fact("Making pots calms the user down.", "activities", "making pots"),
                _fact("The user thinks Thai food dishes are the best.", "likes", "thai food dishes"),
            ]
        },
    )
    scripted_llm.script("reconcile_facts", _all_added, _all_added)

    formation_run(second)

    values = {content: value for content, _, value in _filed(agent)}
    assert values["The user took a pottery class."] == values["Making pots calms the user down."] == "pottery"
    assert values["The user thinks Thai food dishes are the best."] == values["The user loves Thai food."]


@pytest.mark.django_db
def test_relations_take_the_category_of_their_fact(agent, scripted_llm):
    session = user_says(agent, "My sister Maria lives in Lisbon.")
    scripted_llm.script(
        "extract_facts",
        {
            "facts": [_fact("The user's sister Maria lives in Lisbon.", "relationships", "sister")],
            "entities": [{"name": "Maria", "type": "person"}, {"name": "Lisbon", "type": "place"}],
            "relations": [
                {"fact": 1, "subject": "Maria", "predicate": "sister_of", "object": "user"},
                {"fact": 1, "subject": "Maria", "predicate": "lives_in", "object": "Lisbon"},
            ],
        },
    )

    formation_run(session)

    assert sorted(Relation.objects.filter(agent=agent).values_list("predicate", "category")) == [
        ("lives_in", "relationships"),
        ("sister_of", "relationships"),
    ]


@pytest.fixture
def offline_llm():
    set_llm_provider_override(OfflineLLM())
    yield
    set_llm_provider_override(None)


@pytest.mark.django_db
def test_offline_the_agents_own_examples_extend_the_lexicons_and_dropped_categories_are_not_stored(offline_llm):
    agent = AgentFactory(memory_categories=[ORDERS], categories_never_remembered=["health"])
    session = user_says(agent, "I returned the kettle yesterday. I am allergic to peanuts. I love hiking.")

    formation_run(session)

    filed = {content: (category, value) for content, category, value in _filed(agent)}
    assert filed["The user loves hiking."] == ("activities", "hiking")
    assert [category for category, _ in filed.values()].count("orders") == 1
    assert all(category != "health" for category, _ in filed.values())
    assert not any("allergic" in content for content in filed)


@pytest.mark.django_db
def test_offline_without_the_defaults_what_fits_no_category_of_the_agent_is_other(offline_llm):
    agent = AgentFactory(memory_categories=[ORDERS], default_categories_enabled=False)
    session = user_says(agent, "I love hiking.")

    formation_run(session)

    assert _filed(agent) == [("The user loves hiking.", "other", "")]
