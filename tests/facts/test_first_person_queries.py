"""Short first-person questions reach the user's own facts (issue 9): measured with and without the rewrite."""

import pytest

from facts.selectors.first_person import first_person_query
from facts.selectors.search import facts_search
from facts.services.facts import fact_create

USER_FACTS = {
    "job": "The user works as a nurse at Lisbon General Hospital.",
    "tall": "The user is 1.80 m tall.",
    "dog": "The user has a dog named Rex.",
    "live": "The user lives in Porto near the river.",
    "birthday": "The user was born on March 15th, 1990.",
    "married": "The user is married to Marta.",
    "allergic": "The user is allergic to peanuts.",
    "speak": "The user speaks Portuguese and English.",
    "study": "The user studies computer science at university.",
    "kids": "The user has two children, a son and a daughter.",
}
AGENT_FACTS = [
    "The nurses hotline opens at 9am on weekdays.",
    "Dogs are welcome in every store of the chain.",
    "The head office is in Lisbon.",
    "Birthday discounts apply during the customer's birth month.",
    "Children under 12 travel free on weekend trains.",
    "Extra tall furniture orders take three weeks to deliver.",
    "Peanut-free meals can be ordered in advance.",
    "Support is available in Portuguese, English and Spanish.",
    "Student discounts require a valid university card.",
    "Married couples can share one loyalty account.",
]
QUESTIONS = {
    "What's my job?": "job",
    "How tall am I?": "tall",
    "Do I have a dog?": "dog",
    "Where do I live?": "live",
    "When is my birthday?": "birthday",
    "Who am I married to?": "married",
    "What am I allergic to?": "allergic",
    "Which languages do I speak?": "speak",
    "What do I study?": "study",
    "Do I have kids?": "kids",
}


def test_rewrite_is_for_short_first_person_questions_only(settings):
    rewritten = first_person_query("How tall am I?")
    assert rewritten.vector_query == "How tall is the user?"
    assert "height" in rewritten.text_query.split(" or ")
    assert first_person_query("How tall is the Eiffel tower?") is None
    assert first_person_query("I " + "really " * 30 + "wonder what my job is") is None
    settings.FIRST_PERSON_QUERY_EXPANSION = False
    assert first_person_query("How tall am I?") is None


def _hits_at_1(agent, user) -> int:
    hits = 0
    for question, topic in QUESTIONS.items():
        top = facts_search(agent=agent, user=user, query=question, top_k=1)
        hits += bool(top) and top[0].fact.content == USER_FACTS[topic]
    return hits


@pytest.mark.django_db
def test_first_person_questions_find_the_users_own_facts(agent, end_user, settings):
    for content in USER_FACTS.values():
        fact_create(agent=agent, user=end_user, scopes=["user"], content=content)
    for content in AGENT_FACTS:
        fact_create(agent=agent, user=None, scopes=["agent"], content=content)

    settings.FIRST_PERSON_QUERY_EXPANSION = False
    baseline = _hits_at_1(agent, end_user)
    settings.FIRST_PERSON_QUERY_EXPANSION = True
    expanded = _hits_at_1(agent, end_user)

    print(f"first-person questions, hit@1: {baseline}/10 as asked, {expanded}/10 rewritten and boosted")
    assert expanded >= 9
    assert expanded > baseline
