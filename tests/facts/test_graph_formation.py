"""Entities and relations formed with the facts, in the extraction's one call: from a scripted model (the reply's
shape, its validation, provenance to the fact version written, a duplicate still linking, a superseded fact ending
its relation) and from the offline provider through a real worker (spaCy's parse, first person and "my sister"
resolved, the sister named later merged into the same entity); the user's speaker name resolved to the user's own
entity on both paths, and not another speaker's or the assistant's."""

from __future__ import annotations

import json

import pytest
from django.db import transaction

from conversations.models import Session
from conversations.services.ingestion import MessageInput, session_append_messages
from core.llm.base import LLMRequest
from facts.models import Entity, Fact, Relation
from formation.offline.provider import OfflineLLM
from formation.services.formation import session_form_memories
from formation.services.formation_triggers import formation_request
from tests.api_support import api_client_for
from tests.formation_support import user_says, wait_until

SISTER_REPLY = {
    "facts": [
        {"content": "Maria is the user's sister.", "scope": ["user"], "source": [1]},
        {"content": "Maria works at Acme Corp in Berlin.", "scope": ["user"], "source": [1]},
    ],
    "entities": [
        {"name": "Maria", "type": "person", "aliases": ["my sister"]},
        {"name": "Acme Corp", "type": "organisation"},
        {"name": "Berlin", "type": "place"},
    ],
    "relations": [
        {"fact": 1, "subject": "Maria", "predicate": "sister_of", "object": "user"},
        {"fact": 2, "subject": "maria", "predicate": "works at", "object": "Acme Corp"},
        {"fact": 2, "subject": "Acme Corp", "predicate": "based_in", "object": "Berlin"},
        {"fact": 2, "subject": "Nobody Listed", "predicate": "knows", "object": "Maria"},
        {"fact": 9, "subject": "Maria", "predicate": "likes", "value": "tea"},
    ],
}


def _relations(user) -> set[tuple[str, str, str]]:
    return {
        (
            relation.subject.name,
            relation.predicate,
            relation.object_entity.name if relation.object_entity else relation.object_value,
        )
        for relation in Relation.objects.filter(user=user, valid_to__isnull=True).select_related(
            "subject", "object_entity"
        )
    }


@pytest.mark.django_db
def test_the_model_names_entities_and_relations_in_the_same_reply(agent, scripted_llm):
    scripted_llm.script("extract_facts", SISTER_REPLY)
    session = user_says(agent, "My sister Maria works at Acme Corp in Berlin.")

    session_form_memories(session_id=session.pk, trigger="explicit")

    assert len(scripted_llm.calls("extract_facts")) == 1
    assert "relations" in scripted_llm.calls("extract_facts")[0].schema["properties"]
    assert _relations(session.user) == {
        ("Maria", "sister_of", "the user"),
        ("Maria", "works_at", "Acme Corp"),
        ("Acme Corp", "based_in", "Berlin"),
    }  # "Nobody Listed" names no entity of the reply, fact 9 no fact: dropped
    works = Relation.objects.get(predicate="works_at")
    fact = Fact.objects.get(content="Maria works at Acme Corp in Berlin.")
    assert list(works.source_facts.all()) == [fact]
    assert set(works.source_messages.all()) == set(fact.source_messages.all()) and works.source_messages.exists()
    maria = Entity.objects.get(name="Maria")
    assert maria.user == session.user and maria.entity_type == "person" and "my sister" in maria.aliases
    assert Entity.objects.filter(is_user=True, user=session.user).count() == 1


@pytest.mark.django_db
def test_a_reply_with_a_malformed_relation_is_asked_again(agent, scripted_llm):
    broken = {**SISTER_REPLY, "relations": [{"fact": "one", "subject": "Maria", "predicate": "sister_of"}]}
    scripted_llm.script("extract_facts", broken, SISTER_REPLY)
    session = user_says(agent, "My sister Maria works at Acme Corp in Berlin.")

    session_form_memories(session_id=session.pk, trigger="explicit")

    retry = scripted_llm.calls("extract_facts")[1]
    assert "relations[0]" in retry.inputs["previous_error"]
    assert ("Maria", "sister_of", "the user") in _relations(session.user)


@pytest.mark.django_db
def test_a_duplicate_links_to_the_fact_already_held_and_a_new_value_ends_the_old_relation_in_the_world(
    agent, scripted_llm
):
    lives = {
        "facts": [{"content": "The user lives in Lisbon.", "scope": ["user"], "key": "home_city", "source": [1]}],
        "entities": [{"name": "Lisbon", "type": "place"}],
        "relations": [{"fact": 1, "subject": "user", "predicate": "lives_in", "object": "Lisbon"}],
    }
    moved = {
        "facts": [{"content": "The user lives in Berlin.", "scope": ["user"], "key": "home_city", "source": [1]}],
        "entities": [{"name": "Berlin", "type": "place"}],
        "relations": [{"fact": 1, "subject": "I", "predicate": "lives_in", "object": "Berlin"}],
    }
    scripted_llm.script("extract_facts", lives, lives, moved)
    session = user_says(agent, "I live in Lisbon.")
    session_form_memories(session_id=session.pk, trigger="explicit")
    user_says(agent, "Yes, Lisbon, as I said.")
    session_form_memories(session_id=session.pk, trigger="explicit")

    lisbon = Relation.objects.get(object_entity__name="Lisbon")
    held = Fact.objects.get(content="The user lives in Lisbon.")
    assert list(lisbon.source_facts.all()) == [held]
    assert lisbon.source_messages.count() == 2  # the repeat links its message to the relation it restated

    user_says(agent, "I moved to Berlin last month.")
    session_form_memories(session_id=session.pk, trigger="explicit")

    # A move is a change in the world: the Lisbon relation stays current memory, ended where Berlin began.
    lisbon.refresh_from_db()
    assert lisbon.valid_to is None and lisbon.world_time.ended
    ended = Fact.objects.get(content="The user lives in Lisbon.", valid_to__isnull=True)
    assert ended.change_reason == "new value" and ended.world_time.ended and ended.key == ""
    assert _relations(session.user) == {("the user", "lives_in", "Lisbon"), ("the user", "lives_in", "Berlin")}
    berlin = Fact.objects.get(content="The user lives in Berlin.")
    assert berlin.key == "home_city"
    assert list(Relation.objects.get(object_entity__name="Berlin").source_facts.all()) == [berlin]


@pytest.mark.django_db
def test_a_fact_holding_a_secret_forms_no_relation(agent, scripted_llm):
    scripted_llm.script(
        "extract_facts",
        {
            "facts": [{"content": "The user's locker code is 4471-9921.", "scope": ["user"], "source": [1]}],
            "entities": [{"name": "locker", "type": "thing"}],
            "relations": [{"fact": 1, "subject": "locker", "predicate": "has_code", "value": "4471-9921"}],
        },
    )
    session = user_says(agent, "My locker code is 4471-9921.")

    session_form_memories(session_id=session.pk, trigger="explicit")

    assert not Relation.objects.filter(object_value__contains="4471").exists()


def test_the_offline_provider_answers_entities_and_relations_from_its_facts():
    messages = [
        {
            "number": 1,
            "role": "user",
            "text": "I live in Porto and my sister works at Google.",
            "date": "2024-05-01 10:00",
        },
        {"number": 2, "role": "user", "text": "My sister Maria lives in Berlin.", "date": "2024-05-01 10:01"},
    ]
    request = LLMRequest(purpose="extract_facts", messages=[], inputs={"messages": messages, "max_words": 30})

    reply = OfflineLLM().complete(request)

    data = json.loads(reply.text)
    relations = {
        (item["subject"], item["predicate"], item.get("object") or item.get("value")) for item in data["relations"]
    }
    assert ("user", "lives_in", "Porto") in relations
    assert ("the user's sister", "sister_of", "user") in relations
    assert ("Maria", "sister_of", "user") in relations
    assert ("Maria", "lives_in", "Berlin") in relations
    maria = next(entity for entity in data["entities"] if entity["name"] == "Maria")
    assert maria["type"] == "person" and "the user's sister" in maria["aliases"]


@pytest.mark.django_db(transaction=True)
def test_the_offline_worker_forms_one_sister_named_later(agent, celery_worker_process):
    session = user_says(agent, "I live in Porto. My sister works at Google.")
    user_says(agent, "My sister Maria lives in Berlin.")
    with transaction.atomic():
        formation_request(session=Session.objects.get(pk=session.pk), trigger="explicit")

    def formed() -> bool:
        session.refresh_from_db()
        return session.formed_through_message_id is not None and session.formation_status == "idle"

    wait_until(formed, timeout=180, what="the offline formation", process=celery_worker_process)

    sister = Entity.objects.get(user=session.user, aliases__contains=["the user's sister"])
    assert sister.name == "Maria" and sister.entity_type == "person"
    assert _relations(session.user) >= {
        ("the user", "lives_in", "Porto"),
        ("Maria", "sister_of", "the user"),
        ("Maria", "works_at", "Google"),
        ("Maria", "lives_in", "Berlin"),
    }
    assert Entity.objects.filter(user=session.user, entity_type="person").count() == 2  # the user and Maria


def _conversation(agent, *, user: str, turns: list[tuple[str, str, str]]) -> Session:
    """Turns (role, speaker, text) logged as LoCoMo's are: "<speaker>: <text>", the speaker in the metadata."""
    return session_append_messages(
        agent=agent,
        user_external_id=user,
        session_external_id="s1",
        messages=[
            MessageInput(role=role, content=f"{speaker}: {text}", metadata={"speaker": speaker})
            for role, speaker, text in turns
        ],
    ).session


@pytest.mark.django_db
def test_the_users_speaker_name_is_their_own_entity_found_by_that_name(agent):
    session = _conversation(
        agent,
        user="u-7",
        turns=[
            ("user", "Caroline", "I moved to Boston last spring."),
            ("assistant", "Sam", "I moved to Denver last year, Caroline."),
            ("user", "Caroline", "I work at Google now."),
        ],
    )

    session_form_memories(session_id=session.pk, trigger="explicit")  # the offline provider (settings.test)

    me = Entity.objects.get(user=session.user, is_user=True)
    assert "caroline" in me.aliases and "sam" not in me.aliases  # the assistant's side names nobody's entity
    assert not Entity.objects.filter(user=session.user, is_user=False, aliases__overlap=["caroline", "sam"]).exists()
    assert _relations(session.user) >= {("the user", "moved_to", "Boston"), ("the user", "works_at", "Google")}
    works = Relation.objects.get(user=session.user, predicate="works_at")
    assert works.subject == me and works.source_messages.get().content == "Caroline: I work at Google now."
    found = api_client_for(agent).get("/api/v1/entities", {"user": "u-7", "q": "Caroline"})
    assert [(item["id"], item["is_user"]) for item in found.json()["results"]] == [(me.pk, True)]


@pytest.mark.django_db
def test_a_model_naming_the_user_by_their_speaker_name_states_it_of_the_users_entity(agent, scripted_llm):
    scripted_llm.script(
        "extract_facts",
        {
            "facts": [{"content": "Caroline adopted a dog named Rex.", "scope": ["user"], "source": [1]}],
            "entities": [{"name": "Caroline", "type": "person"}, {"name": "Rex", "type": "thing"}],
            "relations": [{"fact": 1, "subject": "Caroline", "predicate": "adopted", "object": "Rex"}],
        },
    )
    session = _conversation(agent, user="u-9", turns=[("user", "Caroline", "I adopted a dog named Rex.")])

    session_form_memories(session_id=session.pk, trigger="explicit")

    adopted = Relation.objects.get(user=session.user, predicate="adopted")
    assert adopted.subject.is_user and "caroline" in adopted.subject.aliases and adopted.object_entity.name == "Rex"
    assert Entity.objects.filter(user=session.user).count() == 2  # the user and Rex: no second Caroline


@pytest.mark.django_db
def test_of_two_people_speaking_as_one_user_only_the_one_the_user_is_named_after_is_them(agent):
    session = _conversation(
        agent,
        user="Caroline",
        turns=[
            ("user", "Melanie", "I moved to Denver last year."),
            ("user", "Caroline", "I moved to Boston last spring."),
        ],
    )

    session_form_memories(session_id=session.pk, trigger="explicit")

    me = Entity.objects.get(user=session.user, is_user=True)
    assert "caroline" in me.aliases and "melanie" not in me.aliases
    assert _relations(session.user) >= {("the user", "moved_to", "Boston"), ("Melanie", "moved_to", "Denver")}
