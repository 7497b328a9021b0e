"""The graph signal beyond flat facts (issue 27): turn search ranks the messages the relations about the entities a
query names were formed from (`graph_rank` on message hits, REST included), within the user's own messages only; and
a question about a period ranks first what the relations that held in it were formed from (their validity)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agents.models import Agent, EndUser
from conversations.models import Message, Session
from conversations.selectors.message_search import messages_search
from conversations.services.message_embeddings import messages_embed_missing
from facts.models import EntityType, Fact
from facts.selectors import facts_search
from facts.selectors.graph_search import messages_graph_ranking
from facts.services.facts import fact_create
from facts.services.graph import EntityMention, RelationStatement, fact_relations_write
from tests.factories import EndUserFactory, MessageFactory, SessionFactory

QUESTION = "Where could Maria visit her friend's office?"
SMALL_TALK = [
    "I drink black coffee every morning",
    "My sister lives in Porto",
    "I am allergic to peanuts",
    "The weather was grey all week",
    "We watched a film about sailing",
    "I finally fixed the kitchen tap",
    "My running shoes are worn out",
    "The library closes early on Fridays",
    "I am reading a novel about a lighthouse",
    "We had pasta with tomatoes for dinner",
    "The train was late again this morning",
    "I planted basil on the balcony",
    "My phone battery dies too quickly",
    "The neighbours have a new puppy",
]


def _person(name: str) -> EntityMention:
    return EntityMention(name=name, entity_type=EntityType.PERSON)


def _said(session: Session, text: str, *, at: datetime) -> Message:
    return MessageFactory(session=session, content=text, created_at=at)


def _formed(agent: Agent, user: EndUser | None, message: Message, *statements: RelationStatement, **fact) -> Fact:
    """A fact formed from `message`, stating `statements`, as formation writes it."""
    formed = fact_create(
        agent=agent, user=user, scopes=["user"] if user else ["agent"], source_messages=[message], **fact
    )
    fact_relations_write(fact=formed, statements=statements, source_messages=[message])
    return formed


@pytest.fixture
def chain_said(agent: Agent, end_user: EndUser) -> dict[str, Message]:
    """Maria -> Tom -> Acme -> Zurich, each relation formed from its own turn, among turns about other things."""
    session = SessionFactory(user=end_user, external_id="s1")
    at = datetime(2024, 4, 2, 9, tzinfo=UTC)
    acme = EntityMention(name="Acme", entity_type=EntityType.ORGANISATION)
    turns = {
        "friend": ("Maria and Tom met at university", RelationStatement(_person("Maria"), "friend_of", _person("Tom"))),
        "job": ("Tom works at Acme these days", RelationStatement(_person("Tom"), "works_at", acme)),
        "city": (
            "Acme has its offices in Zurich",
            RelationStatement(acme, "based_in", EntityMention(name="Zurich", entity_type=EntityType.PLACE)),
        ),
    }
    said, filler = {}, iter(SMALL_TALK)
    for minute, (name, (text, statement)) in enumerate(turns.items()):
        for number in range(4):  # other talk between them: no turn of the chain is a neighbour of another
            _said(session, next(filler), at=at.replace(minute=minute * 10 + number))
        said[name] = _said(session, text, at=at.replace(minute=minute * 10 + 5))
        _formed(agent, end_user, said[name], statement, content=text)
    for number, text in enumerate(filler):
        _said(session, text, at=at.replace(hour=10, minute=number))
    messages_embed_missing(message_ids=list(Message.objects.filter(session=session).values_list("pk", flat=True)))
    return said


def _turn_ranks(hits) -> dict[int, int | None]:
    return {hit.message.pk: hit.graph_rank for hit in hits}


@pytest.mark.django_db
def test_turn_search_ranks_the_turns_two_relations_from_the_named_entity(agent, end_user, chain_said, settings):
    settings.MEMORY_GRAPH_HOPS = 2
    ranks = _turn_ranks(
        messages_search(graph_ranking=messages_graph_ranking, agent=agent, user=end_user, query=QUESTION, top_k=20)
    )

    assert ranks[chain_said["friend"].pk] == 1
    assert ranks[chain_said["job"].pk] == 2
    assert ranks[chain_said["city"].pk] == 3  # shares no word with the question: only the graph reaches it
    assert all(rank is None for pk, rank in ranks.items() if pk not in {m.pk for m in chain_said.values()})


@pytest.mark.django_db
def test_the_graph_lifts_the_related_turn_and_switched_off_changes_nothing(agent, end_user, chain_said, settings):
    settings.MEMORY_GRAPH_WEIGHT = 0
    without = messages_search(
        graph_ranking=messages_graph_ranking, agent=agent, user=end_user, query=QUESTION, top_k=20
    )
    settings.MEMORY_GRAPH_WEIGHT = 1.0
    with_graph = [
        hit.message.pk
        for hit in messages_search(
            graph_ranking=messages_graph_ranking, agent=agent, user=end_user, query=QUESTION, top_k=20
        )
    ]

    assert {hit.graph_rank for hit in without} == {None}
    city = chain_said["city"].pk
    assert city in with_graph
    assert city not in [hit.message.pk for hit in without] or with_graph.index(city) < [
        hit.message.pk for hit in without
    ].index(city)


@pytest.mark.django_db
def test_single_signal_turn_searches_keep_to_their_signal(agent, end_user, chain_said):
    for mode in ("semantic", "text"):
        hits = messages_search(
            graph_ranking=messages_graph_ranking, agent=agent, user=end_user, query=QUESTION, mode=mode, top_k=20
        )
        assert {hit.graph_rank for hit in hits} == {None}


@pytest.mark.django_db
def test_an_agent_wide_relation_never_brings_another_users_turn(agent, end_user, chain_said):
    """Agent-wide entities are walked for every user, but a turn is only ever its own user's."""
    other_user = EndUserFactory(agent=agent)
    other_session = SessionFactory(user=other_user, external_id="s2")
    theirs = _said(other_session, "The Zurich office moved to a new building", at=datetime(2024, 4, 3, tzinfo=UTC))
    messages_embed_missing(message_ids=[theirs.pk])
    _formed(
        agent,
        None,
        theirs,
        RelationStatement(
            EntityMention(name="Acme", entity_type=EntityType.ORGANISATION),
            "moved_to",
            EntityMention(name="Hall B", entity_type=EntityType.PLACE),
        ),
        content="Acme's Zurich office moved to Hall B",
    )

    for user in (end_user, other_user):
        hits = messages_search(
            graph_ranking=messages_graph_ranking, agent=agent, user=user, query="Did Acme move?", top_k=30
        )
        assert {hit.message.session.user_id for hit in hits} == {user.pk}
    assert any(
        hit.graph_rank
        for hit in messages_search(
            graph_ranking=messages_graph_ranking, agent=agent, user=other_user, query="Did Acme move?"
        )
    )


@pytest.mark.django_db
def test_the_api_reports_graph_rank_per_turn(api, end_user, chain_said):
    response = api.post(
        "/api/v1/messages/search",
        {"query": QUESTION, "user": end_user.external_id, "top_k": 20},
        content_type="application/json",
    )

    assert response.status_code == 200, response.json()
    by_id = {hit["message"]["id"]: hit["graph_rank"] for hit in response.json()["results"]}
    assert by_id[chain_said["city"].pk] == 3
    assert "graph_sql" in response["Server-Timing"]


@pytest.fixture
def two_jobs(agent: Agent, end_user: EndUser) -> dict[str, Fact]:
    """Two current facts about Maria, their relations valid from March 2021 and from May 2023."""
    session = SessionFactory(user=end_user, external_id="jobs")
    facts = {}
    for name, valid_from, text, target in [
        ("globex", datetime(2021, 3, 10, tzinfo=UTC), "Maria started a job at Globex", "Globex"),
        ("choir", datetime(2023, 5, 20, tzinfo=UTC), "Maria joined the city choir", "City choir"),
    ]:
        message = _said(session, text, at=valid_from)
        statement = RelationStatement(
            _person("Maria"), "member_of", EntityMention(name=target, entity_type=EntityType.ORGANISATION)
        )
        facts[name] = _formed(agent, end_user, message, statement, content=text, valid_from=valid_from)
    messages_embed_missing(message_ids=[fact.source_messages.get().pk for fact in facts.values()])
    return facts


@pytest.mark.django_db
def test_a_question_about_a_period_ranks_first_the_facts_whose_relations_held_in_it(agent, end_user, two_jobs):
    def graph_order(query: str) -> list[int]:
        hits = [hit for hit in facts_search(agent=agent, user=end_user, query=query) if hit.graph_rank]
        return [hit.fact.pk for hit in sorted(hits, key=lambda hit: hit.graph_rank)]

    assert graph_order("What did Maria do?") == [two_jobs["choir"].pk, two_jobs["globex"].pk]  # the recent first
    assert graph_order("What did Maria do in March 2021?") == [two_jobs["globex"].pk, two_jobs["choir"].pk]


@pytest.mark.django_db
def test_a_question_about_a_period_ranks_first_the_turns_whose_relations_held_in_it(agent, end_user, two_jobs):
    said = {name: fact.source_messages.get().pk for name, fact in two_jobs.items()}

    def graph_order(query: str) -> list[int]:
        hits = [
            hit
            for hit in messages_search(graph_ranking=messages_graph_ranking, agent=agent, user=end_user, query=query)
            if hit.graph_rank
        ]
        return [hit.message.pk for hit in sorted(hits, key=lambda hit: hit.graph_rank)]

    assert graph_order("What did Maria do?") == [said["choir"], said["globex"]]  # the newest first
    assert graph_order("What did Maria do in March 2021?") == [said["globex"], said["choir"]]
