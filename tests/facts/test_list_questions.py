"""List questions answered whole: a question asking for every item of a kind about one person is read by offline
rules (facts.grammar.list_questions), and fact search and turn search return that category's entries about that
person first, one per canonical value, then the usual hits, each hit saying why it was returned."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agents.models import Agent, EndUser
from conversations.models import Message
from conversations.selectors.message_search import messages_search
from conversations.services.message_embeddings import messages_embed_missing
from facts.grammar.list_questions import list_question_read, narrowing_matched
from facts.models import Fact
from facts.selectors import facts_search
from facts.selectors.list_questions import facts_list_entries, messages_list_ranking
from facts.services.facts import fact_create
from tests.category_support import fact_filed
from tests.factories import MessageFactory, SessionFactory

QUESTION = "What activities does Melanie partake in?"


@pytest.mark.parametrize(
    ("question", "categories", "people", "about_the_user"),
    [
        (QUESTION, ("activities", "events"), ("Melanie",), False),
        ("Which books has Melanie read?", ("likes", "activities"), ("Melanie",), False),
        ("Where has Jon travelled?", ("places", "events"), ("Jon",), False),
        ("What pets does Caroline have?", ("possessions", "likes"), ("Caroline",), False),
        ("Who are Jon's friends?", ("relationships",), ("Jon",), False),
        ("What does Melanie like to do?", ("activities", "likes"), ("Melanie",), False),
        ("What does Melanie do to destress?", ("activities", "likes"), ("Melanie",), False),
        ("What has Melanie painted?", ("activities", "events"), ("Melanie",), False),
        ("Which cities have Jon and Gina visited?", ("places", "events"), ("Jon", "Gina"), False),
        ("What are my hobbies?", ("activities", "events"), (), True),
        ("What musical artists/bands has Melanie seen?", ("likes", "activities"), ("Melanie",), False),
    ],
)
def test_a_list_question_is_read_with_its_categories_and_people(question, categories, people, about_the_user):
    read = list_question_read(question)

    assert read is not None
    assert (read.categories, read.people, read.about_the_user) == (categories, people, about_the_user)
    assert read.label == f"list:{categories[0]}"


@pytest.mark.parametrize(
    "question",
    [
        "When did Melanie go camping?",  # asks when
        "Why did Gina start her store?",
        "What book is Jon reading?",  # a singular noun asks for one thing
        "What did Caroline research?",
        "What does Melanie say running has been great for?",
        "How long did it take Jon to open his studio?",
    ],
)
def test_a_question_for_one_thing_is_not_a_list(question):
    assert list_question_read(question) is None


@pytest.mark.parametrize(
    ("question", "narrowing"),
    [
        (QUESTION, ()),  # the whole category: nothing narrows it
        ("What LGBTQ+ events has Caroline participated in?", ("lgbtq",)),
        ("What activities has Melanie done with her family?", ("family",)),
        ("What has Melanie painted?", ("painted",)),
        ("What do Melanie's kids like?", ("kids",)),
        ("What events has Caroline participated in to help children?", ("help", "children")),
    ],
)
def test_a_list_question_keeps_the_words_that_narrow_it(question, narrowing):
    read = list_question_read(question)

    assert read is not None
    assert read.narrowing == narrowing


@pytest.mark.parametrize(
    ("statement", "narrowing", "matched"),
    [
        ("Melanie went to an LGBTQ+ pride parade", ("lgbtq",), True),  # the word itself
        ("Melanie paints sunsets", ("painted",), True),  # the same stem
        ("Melanie went camping with her parents", ("family",), True),  # the lexicon entry the word belongs to
        ("Melanie swims on Saturdays", ("family",), False),
        ("Melanie swims on Saturdays", (), False),
    ],
)
def test_a_statement_matches_a_narrowing_word_by_its_stem_or_its_lexicon_entry(statement, narrowing, matched):
    assert narrowing_matched(statement, narrowing) is matched


@pytest.fixture
def melanie(agent: Agent, end_user: EndUser) -> dict[str, Fact]:
    """Melanie's activities over four sessions, one said twice, among facts about others and about other things."""
    at = datetime(2023, 5, 1, 9, tzinfo=UTC)
    facts = {}
    for number, (name, content, category, value) in enumerate(
        [
            ("pottery", "Melanie took a pottery class with her kids", "activities", "pottery"),
            ("pots", "Melanie made a bowl at the pottery studio", "activities", "pottery"),
            ("camping", "Melanie went camping at the beach with her family", "events", "camping"),
            ("painting", "Melanie paints sunsets", "activities", "painting"),
            ("swimming", "Melanie swims on Saturdays", "activities", "swimming"),
            ("caroline", "Caroline paints abstract art", "activities", "painting"),
            ("with_melanie", "Jon went to the beach with Melanie", "events", "beach"),
            ("dog", "Melanie has a dog named Luna", "possessions", "dog"),
        ]
    ):
        session = SessionFactory(user=end_user, external_id=f"s{number}")
        turn = MessageFactory(session=session, content=content.replace("Melanie", "I"), created_at=at)
        facts[name] = fact_filed(agent, end_user, content, category, value, source_messages=[turn])
    for number in range(12):  # the usual hits: facts that share the question's words, filed elsewhere or not at all
        fact_create(
            agent=agent, user=end_user, scopes=["user"], content=f"Melanie talked about activities at work {number}"
        )
    return facts


@pytest.mark.django_db
def test_fact_search_ranks_every_entry_about_the_person_by_the_list_signal(agent, end_user, melanie, settings):
    settings.MEMORY_LIST_WEIGHT = 4.0  # heavy enough to outrank the twelve facts that share the question's words

    hits = facts_search(agent=agent, user=end_user, query=QUESTION, top_k=10, record_access=False)

    listed = [hit for hit in hits if hit.listed]
    assert len(hits) == 10
    assert {hit.fact.category_value for hit in listed} == {"pottery", "camping", "painting", "swimming"}
    assert {melanie["caroline"].pk, melanie["with_melanie"].pk, melanie["dog"].pk}.isdisjoint(
        hit.fact.pk for hit in listed
    ), "only the named person's statements (their subject), of the categories asked"
    assert {hit.reasons[0] for hit in listed} == {"list:activities", "list:events"}
    assert all(
        not hit.listed and set(hit.reasons) <= {"vector", "text", "graph", "time"} for hit in hits if hit not in listed
    )


@pytest.mark.django_db
def test_switched_off_or_another_mode_keeps_the_usual_ranking(agent, end_user, melanie, settings):
    settings.MEMORY_LIST_WEIGHT = 0.0
    assert not any(hit.listed for hit in facts_search(agent=agent, user=end_user, query=QUESTION, top_k=10))

    settings.MEMORY_LIST_WEIGHT = 1.0
    text_hits = facts_search(agent=agent, user=end_user, query=QUESTION, top_k=10, mode="text")
    assert not any(hit.listed for hit in text_hits)


@pytest.mark.django_db
def test_facts_not_filed_are_not_entries(agent, end_user, melanie, settings):
    """An empty category is memory formed before categories: never read as a list's entry."""
    settings.MEMORY_LIST_WEIGHT = 1.0
    Fact.objects.filter(category="activities").update(category="")

    hits = facts_search(agent=agent, user=end_user, query=QUESTION, top_k=10, record_access=False)

    assert {hit.fact.category_value for hit in hits if hit.listed} == {"camping"}


@pytest.mark.django_db
def test_turn_search_ranks_the_turns_of_the_entries_by_the_list_signal(agent, end_user, melanie, settings):
    settings.MEMORY_LIST_WEIGHT = 4.0
    messages_embed_missing(message_ids=list(Message.objects.values_list("pk", flat=True)))
    source = {name: fact.source_messages.get().pk for name, fact in melanie.items()}

    hits = messages_search(agent=agent, user=end_user, query=QUESTION, top_k=6, list_ranking=messages_list_ranking)

    entries = {name: melanie[name].category_value for name in ("pottery", "pots", "camping", "painting", "swimming")}
    entry_of = {source[name]: value for name, value in entries.items()}
    listed = [hit for hit in hits if hit.listed]
    assert {entry_of[hit.message.pk] for hit in listed} == {"pottery", "camping", "painting", "swimming"}
    assert all(hit.reasons[0] in ("list:activities", "list:events") for hit in listed)
    assert source["caroline"] not in {hit.message.pk for hit in listed}


@pytest.mark.django_db
def test_turn_search_without_the_ranking_or_for_another_question_is_unchanged(agent, end_user, melanie):
    messages_embed_missing(message_ids=list(Message.objects.values_list("pk", flat=True)))

    assert not any(hit.listed for hit in messages_search(agent=agent, user=end_user, query=QUESTION, top_k=6))
    assert messages_list_ranking(agent_id=agent.pk, user_id=end_user.pk, query="When did Melanie swim?") == []


@pytest.mark.django_db
def test_a_narrowed_question_keeps_the_entries_that_match_its_words(agent, end_user, melanie):
    entries = facts_list_entries(
        agent_id=agent.pk, user_id=end_user.pk, query="What activities has Melanie done with her family?"
    )

    assert {pk for entry in entries for pk in entry.ids} == {melanie["camping"].pk}, "camping with her family"


@pytest.mark.django_db
def test_a_question_whose_words_no_entry_matches_keeps_them_all(agent, end_user, melanie):
    query = "What activities has Melanie done on ice?"

    entries = facts_list_entries(agent_id=agent.pk, user_id=end_user.pk, query=query)

    assert {melanie["pottery"].pk, melanie["camping"].pk, melanie["painting"].pk, melanie["swimming"].pk} <= {
        pk for entry in entries for pk in entry.ids
    }
