"""Time in fact search and fact formation (issue 14): the day a fact's text names, resolved against when it was said
at formation and import, and the time signal of facts_search, on real PostgreSQL with the real embedding model."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from io import StringIO

import pytest
from django.core.management import call_command

from conversations.models import MessageEmbedding
from conversations.services.ingestion import MessageInput, session_append_messages
from facts.models import Fact
from facts.selectors import facts_search
from facts.services.facts import fact_create
from formation.services.formation import session_form_memories
from tests.facts.search_support import FILLER
from tests.fakes import facts_reply


@pytest.fixture
def concerts(agent, end_user) -> dict[str, Fact]:
    """Nearly same-worded facts (two current facts never share their content) valid from different months; only
    April's names the day of the concert."""
    facts = {
        name: fact_create(agent=agent, user=end_user, scopes=["user"], content=content, valid_from=valid_from)
        for name, content, valid_from in [
            ("january", "The user played the cello at a concert with friends", datetime(2023, 1, 10, tzinfo=UTC)),
            ("april", "The user played the cello at a concert last Friday", datetime(2023, 4, 17, tzinfo=UTC)),
            ("october", "The user played the cello at a concert with family", datetime(2023, 10, 2, tzinfo=UTC)),
        ]
    }
    for content in FILLER:
        fact_create(agent=agent, user=end_user, scopes=["user"], content=content)
    return facts


def _ids(hits) -> list[int]:
    return [hit.fact.pk for hit in hits]


@pytest.mark.django_db
def test_a_fact_naming_a_relative_day_refers_to_it_from_its_valid_from(concerts):
    assert concerts["april"].refers_to == date(2023, 4, 14)  # the Friday before Monday 17 April 2023
    assert concerts["january"].refers_to is None


@pytest.mark.django_db
def test_a_question_naming_a_month_finds_the_fact_of_that_month(agent, end_user, concerts):
    hits = facts_search(agent=agent, user=end_user, query="Did the user play the cello at a concert in October 2023?")

    assert hits[0].fact.pk == concerts["october"].pk and hits[0].time_rank == 1


@pytest.mark.django_db
def test_a_when_question_finds_the_fact_that_says_when(agent, end_user, concerts):
    hits = facts_search(agent=agent, user=end_user, query="When did the user play the cello at a concert?")

    assert hits[0].fact.pk == concerts["april"].pk and hits[0].time_rank == 1


@pytest.mark.django_db
def test_an_explicit_period_restricts_fact_search(agent, end_user, concerts):
    hits = facts_search(
        agent=agent,
        user=end_user,
        query="cello concert",
        time_from=date(2023, 4, 14),
        time_to=date(2023, 4, 14),
        time_filter="restrict",
    )

    until_february = facts_search(
        agent=agent, user=end_user, query="cello concert", time_to=date(2023, 2, 28), time_filter="restrict"
    )

    assert _ids(hits) == [concerts["april"].pk]
    assert _ids(until_february) == [concerts["january"].pk]


@pytest.mark.django_db
def test_formation_resolves_relative_days_against_when_the_messages_were_said(agent, scripted_llm):
    said_at = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # a Monday
    session = session_append_messages(
        agent=agent,
        user_external_id="u1",
        session_external_id="s1",
        messages=[MessageInput(role="user", content="I ran a charity race yesterday!", created_at=said_at)],
    ).session
    scripted_llm.script("extract_facts", facts_reply("The user ran a charity race yesterday."))

    session_form_memories(session_id=session.pk, trigger="explicit")

    assert Fact.objects.get(content="The user ran a charity race yesterday.").refers_to == date(2023, 5, 7)


@pytest.mark.django_db
def test_import_resolves_relative_days_against_the_session_date(tmp_path):
    conversation = {
        "sample_id": "conv-time",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I went to a support group yesterday."},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "That sounds powerful."},
            ],
        },
        "observation": {
            "session_1_observation": {"Ana": [["Ana went to a support group last Saturday.", "D1:1"]]},
        },
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([conversation]), encoding="utf-8")

    arguments = [str(path), "--format", "locomo", "--agent", "time", "--embed-messages-here"]
    call_command("import_memories", *arguments, stdout=StringIO(), stderr=StringIO())

    refers_to = dict(MessageEmbedding.objects.values_list("message__content", "refers_to"))
    assert refers_to == {"I went to a support group yesterday.": date(2023, 5, 7), "That sounds powerful.": None}
    assert Fact.objects.get().refers_to == date(2023, 5, 6)
