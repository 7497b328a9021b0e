"""Turn-level retrieval's time, neighbour and speaker signals (issue 14), on real pgvector with the real model."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from agents.models import Agent, EndUser
from conversations.models import Message, MessageEmbedding
from conversations.selectors.message_search import messages_search
from conversations.services.message_embeddings import messages_embed_missing
from core.exceptions import ApplicationError
from tests.factories import MessageFactory, SessionFactory


def _session(agent: Agent, user: EndUser, *, name: str, said_at: datetime, turns: list[str]) -> list[Message]:
    session = SessionFactory(user=user, external_id=name, started_at=said_at)
    return [
        MessageFactory(session=session, content=text, created_at=said_at.replace(second=index))
        for index, text in enumerate(turns)
    ]


@pytest.fixture
def hikes(agent: Agent, end_user: EndUser) -> dict[str, Message]:
    """The same words said in three sessions months apart; only May's turn says when the hike was."""
    turns = {}
    for name, said_at, text in [
        ("march", datetime(2023, 3, 14, 10, tzinfo=UTC), "We went hiking up to the lake with the kids."),
        ("may", datetime(2023, 5, 8, 10, tzinfo=UTC), "We went hiking up to the lake with the kids last Saturday."),
        ("july", datetime(2023, 7, 20, 10, tzinfo=UTC), "We went hiking up to the lake with the kids."),
    ]:
        turns[name] = _session(agent, end_user, name=name, said_at=said_at, turns=[text])[0]
    messages_embed_missing(message_ids=[message.pk for message in turns.values()])
    return turns


def test_relative_dates_are_resolved_against_when_the_message_was_said(hikes):
    refers_to = dict(MessageEmbedding.objects.values_list("message_id", "refers_to"))

    assert refers_to[hikes["may"].pk] == date(2023, 5, 6)  # the Saturday before Monday 8 May 2023
    assert refers_to[hikes["march"].pk] is None and refers_to[hikes["july"].pk] is None


@pytest.mark.django_db
def test_a_question_naming_a_month_finds_the_turn_of_that_month_among_same_worded_ones(agent, end_user, hikes):
    hits = messages_search(agent=agent, user=end_user, query="Who went hiking up to the lake in July 2023?", top_k=3)

    assert hits[0].message.pk == hikes["july"].pk
    assert hits[0].time_rank == 1 and hits[0].vector_rank is not None and hits[0].text_rank is not None
    assert {hit.time_rank for hit in hits[1:]} == {None}


@pytest.mark.django_db
def test_a_when_question_finds_the_turn_that_says_when(agent, end_user, hikes):
    hits = messages_search(agent=agent, user=end_user, query="When did we go hiking up to the lake?", top_k=3)

    assert hits[0].message.pk == hikes["may"].pk and hits[0].time_rank == 1


@pytest.mark.django_db
def test_an_explicit_period_restricts_or_boosts(agent, end_user, hikes):
    restricted = messages_search(
        agent=agent,
        user=end_user,
        query="hiking up to the lake",
        time_from=date(2023, 3, 1),
        time_to=date(2023, 3, 31),
        time_filter="restrict",
    )
    boosted = messages_search(agent=agent, user=end_user, query="hiking up to the lake", time_from=date(2023, 7, 1))

    open_ended = messages_search(
        agent=agent, user=end_user, query="hiking up to the lake", time_from=date(2023, 5, 1), time_filter="restrict"
    )

    assert [hit.message.pk for hit in restricted] == [hikes["march"].pk]
    assert boosted[0].message.pk == hikes["july"].pk and len(boosted) == 3
    assert {hit.message.pk for hit in open_ended} == {hikes["may"].pk, hikes["july"].pk}


@pytest.mark.django_db
def test_a_restriction_keeps_a_turn_that_names_a_day_in_the_period(agent, end_user, hikes):
    hits = messages_search(
        agent=agent,
        user=end_user,
        query="hiking up to the lake",
        time_from=date(2023, 5, 6),
        time_to=date(2023, 5, 6),
        time_filter="restrict",
        mode="text",
    )

    assert [hit.message.pk for hit in hits] == [hikes["may"].pk]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"time_from": date(2023, 5, 2), "time_to": date(2023, 5, 1)}, "time_to"),
        ({"time_filter": "restrict"}, "time_filter"),
        ({"time_filter": "nearby", "time_from": date(2023, 5, 1)}, "time_filter"),
    ],
)
def test_invalid_time_options_name_their_field(agent, end_user, options, field):
    with pytest.raises(ApplicationError) as raised:
        messages_search(agent=agent, user=end_user, query="hiking", **options)

    assert list(raised.value.fields) == [field]


@pytest.mark.django_db
def test_the_turn_next_to_a_hit_is_returned_when_only_it_holds_the_answer(agent, end_user):
    said_at = datetime(2024, 2, 1, 9, tzinfo=UTC)
    answer, question, reply = _session(
        agent,
        end_user,
        name="puppy",
        said_at=said_at,
        turns=[
            "Biscuit finally came home with us this morning!",
            "Congratulations on the new puppy! What breed is it?",
            "A beagle, and very loud.",
        ],
    )
    # Each in a session of its own, sharing no word with the question: they are found by the vector signal only.
    distractors = [
        _session(agent, end_user, name=f"other-{index}", said_at=said_at.replace(day=2 + index), turns=[text])[0]
        for index, text in enumerate(
            [
                "What should we call the goldfish?",
                "The vet says our old cat needs a tag.",
                "Dogs need a lot of walks every day.",
                "My neighbour's dog barks all night long.",
            ]
        )
    ]
    messages_embed_missing(message_ids=[message.pk for message in [answer, question, reply, *distractors]])
    query = "What is the name of the new puppy?"

    hybrid = messages_search(agent=agent, user=end_user, query=query, top_k=4)
    vector_only = messages_search(agent=agent, user=end_user, query=query, top_k=4, mode="semantic")

    # The reply is indexed after the question, so both match it; the turn before the question names the puppy.
    assert {hit.message.pk for hit in hybrid[:2]} == {question.pk, reply.pk}
    hit = next(hit for hit in hybrid if hit.message.pk == answer.pk)
    assert hit.neighbour_rank == 1 and hit.text_rank is None
    assert answer.pk not in [hit.message.pk for hit in vector_only]
    assert {hit.neighbour_rank for hit in vector_only} == {None}


@pytest.mark.django_db
def test_the_turns_of_the_speaker_a_question_names_rank_higher(agent, end_user):
    said_at = datetime(2024, 3, 1, 9, tzinfo=UTC)
    session = SessionFactory(user=end_user, external_id="painting", started_at=said_at)
    turns = [
        MessageFactory(session=session, content=text, metadata={"speaker": speaker}, created_at=said_at)
        for speaker, text in [
            ("Caroline", "Painting landscapes helps me unwind after work."),
            ("Melanie", "I took up pottery this spring, it calms me down."),
            ("Caroline", "Watercolours are my favourite way to relax."),
        ]
    ]
    messages_embed_missing(message_ids=[turn.pk for turn in turns])

    hits = messages_search(agent=agent, user=end_user, query="How does Melanie relax?", top_k=3)

    assert hits[0].message.pk == turns[1].pk and hits[0].speaker_rank == 1
    assert {hit.speaker_rank for hit in hits[1:]} == {None}
