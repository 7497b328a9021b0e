"""Filing statements by category with the lexicons (facts/grammar/categories.py), and values made canonical within a
category and a person."""

from __future__ import annotations

import pytest

from facts.grammar.categories import custom_lexicon, reply_facts_file, statement_file, value_canonical


@pytest.mark.parametrize(
    ("statement", "category", "value"),
    [
        ("Caroline carves little birds out of driftwood.", "activities", "woodcarving"),
        ("Melanie ran a marathon.", "activities", "running"),
        ("Talia went to a pottery class on Saturday.", "activities", "pottery"),
        ("The user enjoys making pots.", "activities", "pottery"),
        ("The user's sister is called Ana.", "relationships", "sister"),
        ("The user is allergic to peanuts.", "health", "allergy"),
        ("The user's daughter has a peanut allergy.", "health", "allergy"),
        ("The user works as a nurse.", "work", "nurse"),
        ("The user lives in Denver.", "places", "denver"),
        ("The user hates horror films.", "dislikes", "horror films"),
        ("The user plans to move to Berlin.", "plans", "move to berlin"),
        ("The user has a dog named Luna.", "possessions", "dog"),
        ("The user got married in June.", "events", "wedding"),
        ("The user is Buddhist.", "beliefs", "faith"),
        ("The user's name is Gene Parker.", "identity", "name"),
        ("The user is having a rough week.", "other", ""),
    ],
)
def test_a_statement_is_filed_under_its_topic_with_a_canonical_value(statement, category, value):
    filed = statement_file(statement)

    assert (filed.category, filed.value) == (category, value)


def test_values_naming_the_same_thing_become_one_for_the_person():
    assert value_canonical(category="activities", value="a pottery class", known=[]) == "pottery"
    assert value_canonical(category="activities", value="Making pots", known=["pottery"]) == "pottery"
    # No lexicon entry: the value the person already has in the category that names the same thing.
    assert value_canonical(category="likes", value="Italian food", known=["italian food and wine"]) == (
        "italian food and wine"
    )
    assert value_canonical(category="likes", value="The Italian cuisine!", known=["thai food"]) == "italian cuisine"


def test_an_agents_own_category_is_read_first_and_its_examples_extend_the_lexicons():
    orders = custom_lexicon(
        slug="orders",
        name="Orders",
        description="What the user ordered from the shop.",
        examples=("The user ordered a blue kettle.", "The user returned the toaster."),
    )

    assert statement_file("The user returned a broken kettle.", custom=[orders]).category == "orders"
    assert statement_file("The user loves hiking.", custom=[orders]).category == "activities"


def test_the_offline_reply_is_filed_in_place():
    facts = [{"content": "The user plays the oud."}, {"content": "The user ordered a kettle."}]

    reply_facts_file(facts, categories=[{"slug": "orders", "name": "Orders", "examples": ["The user ordered tea."]}])

    assert [(fact["category"], fact["category_value"]) for fact in facts] == [
        ("activities", "oud"),
        ("orders", "kettle"),
    ]
