"""Turn-level retrieval on real pgvector with the real local embedding model."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.models import Agent, EndUser
from conversations.models import Message, Session
from conversations.selectors.message_search import messages_search_similar
from conversations.services.message_embeddings import messages_embed_missing
from tests.factories import EndUserFactory, MessageFactory, SessionFactory


@pytest.fixture
def conversations(agent: Agent, end_user: EndUser, session: Session) -> dict[str, Message]:
    earlier = SessionFactory(user=end_user, external_id="earlier")
    stranger = EndUserFactory(agent=agent, external_id="stranger")
    strangers_session = SessionFactory(user=stranger, external_id="strangers")
    messages = {
        "here": MessageFactory(session=session, content="My cat Tom keeps scratching the sofa"),
        "here_other": MessageFactory(session=session, content="What time is the train to Paris?"),
        "earlier": MessageFactory(session=earlier, content="My kitten claws at the furniture"),
        "stranger": MessageFactory(session=strangers_session, content="My cat scratches the sofa all day"),
    }
    messages_embed_missing(message_ids=[m.pk for m in messages.values()])
    return messages


def _ids(hits) -> list[int]:
    return [hit.message.pk for hit in hits]


def test_young_session_searches_all_the_users_sessions_but_never_other_users(agent, end_user, session, conversations):
    Session.objects.filter(pk=session.pk).update(message_count=2)
    session.refresh_from_db()

    hits = messages_search_similar(agent=agent, user=end_user, session=session, query="cat damaging my couch", top_k=5)

    assert _ids(hits)[:2] == [conversations["here"].pk, conversations["earlier"].pk]
    assert conversations["stranger"].pk not in _ids(hits)
    assert hits[1].session_external_id == "earlier" and 0 < hits[1].similarity < hits[0].similarity <= 1


def test_a_session_with_enough_messages_stays_within_itself(agent, end_user, session, conversations, settings):
    settings.MESSAGE_SEARCH_WIDEN_BELOW_MESSAGES = 50
    Session.objects.filter(pk=session.pk).update(message_count=50)
    session.refresh_from_db()

    hits = messages_search_similar(agent=agent, user=end_user, session=session, query="cat damaging my couch", top_k=5)

    assert set(_ids(hits)) == {conversations["here"].pk, conversations["here_other"].pk}


def test_excluded_recent_turns_and_low_similarity_are_left_out(agent, end_user, session, conversations):
    hits = messages_search_similar(
        agent=agent,
        user=end_user,
        session=session,
        query="cat damaging my couch",
        top_k=5,
        # The train question is indexed after the cat message before it (0.48 similar); the kitten message 0.64.
        min_similarity=0.5,
        exclude_message_ids=[conversations["here"].pk],
    )

    assert _ids(hits) == [conversations["earlier"].pk]


def test_without_a_user_nothing_is_searched(agent, conversations):
    with CaptureQueriesContext(connection) as queries:
        assert messages_search_similar(agent=agent, user=None, session=None, query="cat", top_k=5) == []
    assert len(queries) == 0
