"""A question about the user that asks for one topic of theirs (a single-valued slot: employer, job, home, partner; or
a topic without one: pets, diet, sport, health): the facts that answer it (a slot stated by a relation of the
user's or a profile key, or a statement about the user filed under the topic's category) outrank those that only
share the question's words, on real PostgreSQL with the real embedding model."""

from __future__ import annotations

import pytest
from django.test import override_settings

from facts.grammar.slots import EMPLOYER, HOME, JOB, MANAGER, PARTNER, RELATIONSHIP, QuestionTopic, question_topic
from facts.models import EntityType
from facts.selectors import facts_search
from facts.services.facts import fact_create
from facts.services.graph import EntityMention, RelationStatement
from tests.facts.search_support import FILLER, fact_stating

USER = EntityMention(name="user")


@pytest.mark.parametrize(
    "question, topic",
    [
        ("Where does the user work now?", QuestionTopic(frozenset({EMPLOYER, JOB}), ("work",))),
        ("What does the user do for a living these days?", QuestionTopic(frozenset({EMPLOYER, JOB}), ("work",))),
        ("Which city does the user live in?", QuestionTopic(frozenset({HOME}), ("places",))),
        (
            "Who is the user's partner these days?",
            QuestionTopic(frozenset({PARTNER, RELATIONSHIP}), ("relationships",)),
        ),
        ("Which pets does the user have now?", QuestionTopic(frozenset(), ("possessions",))),
        ("What diet was the user following in 2020?", QuestionTopic(frozenset(), ("likes", "dislikes", "health"))),
        ("What sport did the user do in 2019?", QuestionTopic(frozenset(), ("activities",))),
        ("Who is the user's manager now?", QuestionTopic(frozenset({MANAGER}), ())),
        ("What does the user drink these days?", QuestionTopic(frozenset(), ("likes", "dislikes", "health"))),
        ("Where does Dana work?", None),  # not about the user (a name is read as the user's before this)
        ("Where did the user go after work?", None),  # work is only when
        ("When did the user get home?", None),
        ("What did the user eat at the wedding?", None),  # one meal, no diet
        ("Does the user work out?", None),
        ("Does the user like horror films?", None),
        ("Did the user's partner move to another city?", None),  # two topics: none
    ],
)
def test_a_question_names_the_topic_it_asks_for(question, topic):
    found = question_topic(question)
    assert (found.slots, found.categories) == (topic.slots, topic.categories) if topic else found is None


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


def _reasons(agent, user, query: str) -> dict[str, list[str]]:
    hits = facts_search(agent=agent, user=user, query=query, top_k=20, record_access=False)
    return {hit.fact.content: hit.reasons for hit in hits}


def _order(agent, user, query: str) -> list[str]:
    return list(_reasons(agent, user, query))


@pytest.mark.django_db
def test_the_facts_stating_the_slot_asked_for_come_first_and_say_so(agent, end_user, work_and_swimming):
    with override_settings(MEMORY_TOPIC_FIRST=False):
        plain = _order(agent, end_user, "Which company does the user work for?")
    reasons = _reasons(agent, end_user, "Which company does the user work for?")

    assert plain[0] == "The user swims every morning before work."  # it shares the question's words
    assert list(reasons)[0] == "The user co-runs Ledgerly." and reasons["The user co-runs Ledgerly."][0] == "topic:work"
    assert [content for content in reasons if content != "The user co-runs Ledgerly."] == [
        content for content in plain if content != "The user co-runs Ledgerly."
    ]
    assert not any("topic:work" in why for content, why in reasons.items() if content != "The user co-runs Ledgerly.")


@pytest.mark.django_db
def test_a_question_about_another_topic_puts_nothing_of_this_one_first(agent, end_user, work_and_swimming):
    reasons = _reasons(agent, end_user, "Which city does the user live in?")
    # Only a statement of living somewhere answers it: not one of travelling, nor one about someone of the user's.
    assert not any(why[0].startswith("topic:") for why in reasons.values())


@pytest.mark.django_db
def test_a_statement_about_the_user_filed_under_the_topic_comes_first_without_a_relation(agent, end_user):
    juno = fact_create(
        agent=agent, user=end_user, scopes=["user"], content="The user adopted a border collie puppy named Juno."
    )
    miso = fact_create(agent=agent, user=end_user, scopes=["user"], content="Kasia has a cat named Miso.")
    for content in FILLER:
        fact_create(agent=agent, user=end_user, scopes=["user"], content=content)
    assert (juno.category, miso.category) == ("possessions", "possessions")

    reasons = _reasons(agent, end_user, "Which pets does the user have now?")

    assert list(reasons)[0] == juno.content and "topic:possessions" in reasons[juno.content]
    assert "topic:possessions" not in reasons[miso.content]  # about Kasia, not the user


@pytest.mark.django_db
def test_a_statement_about_someone_who_was_the_users_does_not_answer_for_now(agent, end_user):
    theo = fact_create(agent=agent, user=end_user, scopes=["user"], content="The user's boyfriend Theo is a chef.")
    ryan = fact_create(
        agent=agent, user=end_user, scopes=["user"], content="The user's ex-boyfriend Ryan came into the café."
    )
    for content in FILLER:
        fact_create(agent=agent, user=end_user, scopes=["user"], content=content)
    assert (theo.category, ryan.category) == ("relationships", "relationships")

    reasons = _reasons(agent, end_user, "Who is the user dating?")

    assert list(reasons)[0] == theo.content and "topic:relationships" not in reasons[ryan.content]


@pytest.mark.django_db
def test_someone_who_was_the_users_answers_a_question_about_then(agent, end_user):
    paul = fact_create(
        agent=agent, user=end_user, scopes=["user"], content="The user's ex-husband Paul has the kids on weekends."
    )
    for content in FILLER:
        fact_create(agent=agent, user=end_user, scopes=["user"], content=content)

    assert "topic:relationships" in _reasons(agent, end_user, "Who was the user married to in 2015?")[paul.content]


@pytest.mark.django_db
def test_a_question_for_the_users_manager_is_answered_by_who_manages_them(agent, end_user):
    rohan = fact_stating(
        agent,
        end_user,
        "Rohan is the user's manager at Flipkart.",
        RelationStatement(EntityMention(name="Rohan"), "manager_of", USER),
    )
    for content in FILLER:
        fact_create(agent=agent, user=end_user, scopes=["user"], content=content)

    reasons = _reasons(agent, end_user, "Who is the user's manager now?")
    assert list(reasons)[0] == rohan.content and "topic:manager" in reasons[rohan.content]
