"""POST /api/v1/messages/search: turn-level retrieval with vector, BM25 full-text and fused modes."""

import pytest
from django.test import Client

from conversations.models import Message
from conversations.services.message_embeddings import message_search_text, messages_embed_missing
from tests.factories import EndUserFactory, MessageFactory, SessionFactory


@pytest.fixture
def turns(agent, end_user, session) -> dict[str, Message]:
    other = EndUserFactory(agent=agent)
    other_session = SessionFactory(user=other, external_id="theirs")
    said = [
        ("cat", "user", {"speaker": "Gene"}, "My cat Tom keeps scratching the sofa."),
        ("train", "user", {"speaker": "Gene"}, "What time is the train to Paris tomorrow?"),
        ("question", "assistant", {}, "Did you do anything fun last weekend?"),
        ("answer", "user", {"speaker": "Gene"}, "Yes! We finally went kayaking on Lake Annecy."),
    ]
    stored = {
        name: MessageFactory(session=session, role=role, metadata=metadata, content=content)
        for name, role, metadata, content in said
    }
    stored["theirs"] = MessageFactory(session=other_session, content="We went kayaking on Lake Annecy too.")
    messages_embed_missing(message_ids=[m.pk for m in stored.values()])
    return stored


def _search(api: Client, body: dict):
    return api.post("/api/v1/messages/search", body, content_type="application/json")


def test_indexed_text_has_the_speaker_and_the_turn_before(turns):
    assert message_search_text(message=turns["answer"], previous=turns["question"]) == (
        "assistant: Did you do anything fun last weekend?\nGene: Yes! We finally went kayaking on Lake Annecy."
    )


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["hybrid", "semantic", "text"])
def test_each_mode_finds_the_turn_and_never_another_users(api, turns, mode):
    response = _search(api, {"query": "Where did Gene go kayaking?", "user": "user-1", "top_k": 3, "mode": mode})

    assert response.status_code == 200, response.json()
    results = response.json()["results"]
    assert results[0]["message"]["id"] == turns["answer"].pk
    assert turns["theirs"].pk not in [hit["message"]["id"] for hit in results]
    assert results[0]["session"] == "session-1"
    assert (results[0]["vector_rank"] is None) == (mode == "text")
    assert (results[0]["text_rank"] is None) == (mode == "semantic")


@pytest.mark.django_db
def test_full_text_matches_any_word_and_ranks_rare_words_first(api, turns):
    """An AND of every question word would match nothing here; BM25 prefers the rare word to the speaker's name."""
    response = _search(api, {"query": "When is Gene's train to Paris?", "user": "user-1", "mode": "text"})

    results = response.json()["results"]
    assert results[0]["message"]["id"] == turns["train"].pk
    assert len(results) >= 2  # other turns of Gene's match on the name alone


@pytest.mark.django_db
def test_the_previous_turn_makes_a_reply_findable_by_full_text(api, turns):
    """The reply says nothing of a weekend; the question it answers does."""
    response = _search(api, {"query": "fun weekend kayaking", "user": "user-1", "mode": "text", "top_k": 1})

    assert [hit["message"]["id"] for hit in response.json()["results"]] == [turns["answer"].pk]


@pytest.mark.django_db
def test_bad_input_names_the_field_and_unknown_users_have_no_messages(api, turns):
    response = _search(api, {"query": "kayak"})
    assert response.status_code == 400 and "user" in response.json()["error"]["fields"]
    response = _search(api, {"query": "kayak", "user": "user-1", "mode": "fuzzy", "top_k": 0})
    assert response.status_code == 400 and {"mode", "top_k"} <= set(response.json()["error"]["fields"])
    response = _search(api, {"query": "kayak", "user": "never-seen"})
    assert response.status_code == 200 and response.json()["results"] == []
