"""facts_search on real PostgreSQL + pgvector with the real local embedding model."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.models import EndUser
from core.exceptions import ApplicationError
from facts.models import Fact
from facts.selectors import facts_search
from facts.services.facts import fact_close, fact_create, fact_supersede
from tests.factories import AgentFactory, EndUserFactory
from tests.facts.search_support import FILLER


@pytest.fixture
def other_user(agent) -> EndUser:
    return EndUserFactory(agent=agent)


@pytest.fixture
def store(agent, end_user) -> dict[str, Fact]:
    facts = {
        "dog": fact_create(
            agent=agent, user=end_user, scopes=["user"], content="The user adopted a beagle named Biscuit"
        ),
        "plate": fact_create(
            agent=agent, user=end_user, scopes=["user"], content="The user's licence plate number is QX-4471"
        ),
        "support": fact_create(agent=agent, user=None, scopes=["agent"], content="Support hours are 9am to 5pm CET"),
    }
    for content in FILLER:
        fact_create(agent=agent, user=end_user, scopes=["user"], content=content)
    return facts


def _contents(hits) -> list[str]:
    return [hit.fact.content for hit in hits]


@pytest.mark.django_db
def test_a_paraphrase_is_found_by_the_semantic_signal(agent, end_user, store):
    hits = facts_search(agent=agent, user=end_user, query="Does the user have any pets?", mode="semantic", top_k=3)

    assert hits[0].fact == store["dog"]
    assert hits[0].vector_rank == 1 and hits[0].text_rank is None and hits[0].text_score is None
    assert hits[0].similarity > 0.3
    assert [hit.vector_rank for hit in hits] == [1, 2, 3]


@pytest.mark.django_db
def test_a_rare_number_is_found_by_the_text_signal(agent, end_user, store):
    hits = facts_search(agent=agent, user=end_user, query="QX-4471", mode="text")

    assert _contents(hits) == [store["plate"].content]
    assert hits[0].text_rank == 1 and hits[0].text_score > 0
    assert hits[0].vector_rank is None and hits[0].similarity is None


@pytest.mark.django_db
def test_hybrid_ranks_both_signals_and_reports_each_rank(agent, end_user, store):
    pets = facts_search(agent=agent, user=end_user, query="Does the user have any pets?", top_k=3)
    plate = facts_search(agent=agent, user=end_user, query="licence plate QX-4471", top_k=3)

    assert pets[0].fact == store["dog"] and pets[0].vector_rank == 1
    assert plate[0].fact == store["plate"]
    assert plate[0].text_rank == 1 and plate[0].vector_rank is not None
    assert plate[0].similarity is not None
    assert plate[0].score > plate[1].score
    # Fused RRF, scaled: first place in both signals scores exactly 1.
    both_first = [hit for hit in plate if hit.vector_rank == 1 and hit.text_rank == 1]
    assert all(hit.score == pytest.approx(1.0) for hit in both_first)


@pytest.mark.django_db
def test_another_users_and_another_agents_facts_never_appear(agent, end_user, other_user, store):
    other_agent = AgentFactory()
    stranger = EndUserFactory(agent=other_agent, external_id=end_user.external_id)
    fact_create(agent=agent, user=other_user, scopes=["user"], content="The user adopted a poodle named Noodle")
    fact_create(agent=other_agent, user=None, scopes=["agent"], content="Our office dog is a beagle named Biscuit")
    fact_create(agent=other_agent, user=stranger, scopes=["user"], content="The user adopted a beagle named Biscuit")
    shared = fact_create(agent=agent, user=other_user, scopes=["user", "agent"], content="Everyone loves the dog park")

    for kwargs in ({}, {"as_of": timezone.now()}, {"include_history": True}):
        hits = facts_search(agent=agent, user=end_user, query="beagle dog named Biscuit Noodle", top_k=50, **kwargs)
        ids = {hit.fact.pk for hit in hits}
        assert ids <= set(Fact.objects.filter(agent=agent).values_list("pk", flat=True)), kwargs
        assert all(hit.fact.user_id in (end_user.pk, None) or "agent" in hit.fact.scopes for hit in hits), kwargs
        assert shared.pk in ids and store["dog"].pk in ids, kwargs

    agent_wide = facts_search(agent=agent, user=None, query="beagle dog named Biscuit", top_k=50)
    assert {hit.fact.pk for hit in agent_wide} == {store["support"].pk, shared.pk}


@pytest.mark.django_db
def test_superseded_versions_appear_only_with_history_or_as_of(agent, end_user, store):
    before = timezone.now()
    newer = fact_supersede(fact=store["dog"], content="The user adopted a beagle named Pretzel", reason="renamed")

    current = facts_search(agent=agent, user=end_user, query="beagle named Biscuit", top_k=20)
    history = facts_search(agent=agent, user=end_user, query="beagle named Biscuit", top_k=20, include_history=True)
    then = facts_search(agent=agent, user=end_user, query="beagle named Biscuit", top_k=20, as_of=before)

    assert store["dog"].pk not in {hit.fact.pk for hit in current} and newer.pk in {hit.fact.pk for hit in current}
    assert {store["dog"].pk, newer.pk} <= {hit.fact.pk for hit in history}
    assert store["dog"].pk in {hit.fact.pk for hit in then} and newer.pk not in {hit.fact.pk for hit in then}


@pytest.mark.django_db
def test_min_similarity_drops_vector_candidates_but_keeps_text_matches(agent, end_user, store):
    hits = facts_search(agent=agent, user=end_user, query="plate QX-4471", min_similarity=0.95)

    assert _contents(hits) == [store["plate"].content]
    assert hits[0].vector_rank is None and hits[0].similarity < 0.95


@pytest.mark.django_db
def test_fallback_to_recent_when_nothing_passes_the_threshold(agent, end_user, store):
    query = "quantum chromodynamics lecture"
    assert facts_search(agent=agent, user=end_user, query=query, min_similarity=0.9) == []

    hits = facts_search(agent=agent, user=end_user, query=query, min_similarity=0.9, top_k=2, fallback_to_recent=True)

    newest = Fact.objects.filter(agent=agent).order_by("-valid_from", "-pk")[:2]
    assert [hit.fact for hit in hits] == list(newest)
    assert all(hit.score == 0 and hit.vector_rank is None and hit.text_rank is None for hit in hits)


@pytest.mark.django_db
def test_a_small_store_returns_every_fact_scored(agent, end_user):
    facts = [fact_create(agent=agent, user=end_user, scopes=["user"], content=content) for content in FILLER[:4]] + [
        fact_create(agent=agent, user=None, scopes=["agent"], content="Support hours are 9am to 5pm CET")
    ]

    hits = facts_search(agent=agent, user=end_user, query="peanuts", mode="text", top_k=10)

    assert {hit.fact.pk for hit in hits} == {fact.pk for fact in facts}
    assert hits[0].fact.content == "The user is allergic to peanuts" and hits[0].score > 0
    assert all(hit.score == 0 for hit in hits[1:])


@pytest.mark.django_db
def test_recency_weight_favours_recent_facts(agent, end_user, store):
    old = fact_create(
        agent=agent,
        user=end_user,
        scopes=["user"],
        content="The user drinks green tea every afternoon",
        valid_from=timezone.now() - timedelta(days=300),
    )
    query = "What does the user drink?"

    plain = facts_search(agent=agent, user=end_user, query=query, mode="semantic", top_k=3)
    recent = facts_search(agent=agent, user=end_user, query=query, mode="semantic", top_k=3, recency_weight=0.9)

    assert old in [hit.fact for hit in plain]
    assert old not in [hit.fact for hit in recent]


@pytest.mark.django_db
def test_mmr_gives_near_duplicates_way_to_other_relevant_facts(agent, end_user, store):
    for content in ("The user adopted a beagle called Biscuit", "Biscuit is the user's adopted beagle"):
        fact_create(agent=agent, user=end_user, scopes=["user"], content=content)
    query = "the user's beagle Biscuit"

    plain = facts_search(agent=agent, user=end_user, query=query, mode="semantic", top_k=3)
    diverse = facts_search(agent=agent, user=end_user, query=query, mode="semantic", top_k=3, mmr_lambda=0.3)

    assert all("Biscuit" in hit.fact.content for hit in plain)
    assert diverse[0].fact == plain[0].fact
    assert sum("Biscuit" in hit.fact.content for hit in diverse) < 3


@pytest.mark.django_db
def test_scopes_and_tags_filter_before_ranking(agent, end_user, store):
    tagged = fact_create(
        agent=agent, user=end_user, scopes=["user"], content="The user's cat is called Miso", tags=["pets"]
    )

    agent_only = facts_search(agent=agent, user=end_user, query="pets", scopes=["agent"], top_k=20)
    pets = facts_search(agent=agent, user=end_user, query="beagle", tags=["pets", "unused"], top_k=20)

    assert [hit.fact for hit in agent_only] == [store["support"]]
    assert [hit.fact for hit in pets] == [tagged]


@pytest.mark.django_db
def test_closed_facts_are_not_found(agent, end_user, store):
    fact_close(fact=store["plate"], reason="sold the car")

    assert facts_search(agent=agent, user=end_user, query="QX-4471", mode="text") == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"query": "  "}, "query"),
        ({"top_k": 0}, "top_k"),
        ({"top_k": 101}, "top_k"),
        ({"mode": "fuzzy"}, "mode"),
        ({"min_similarity": 1.5}, "min_similarity"),
        ({"mode": "text", "min_similarity": 0.5}, "min_similarity"),
        ({"recency_weight": -0.1}, "recency_weight"),
        ({"mmr_lambda": 2}, "mmr_lambda"),
        ({"scopes": ["session"]}, "scopes"),
    ],
)
def test_invalid_options_name_the_field(agent, end_user, options, field):
    with pytest.raises(ApplicationError) as raised:
        facts_search(**({"agent": agent, "user": end_user, "query": "anything"} | options))

    assert field in raised.value.fields


@pytest.mark.django_db
def test_a_user_of_another_agent_is_rejected(agent):
    stranger = EndUserFactory(agent=AgentFactory(), external_id="u")

    with pytest.raises(ApplicationError) as raised:
        facts_search(agent=agent, user=stranger, query="anything")

    assert "user" in raised.value.fields


@pytest.mark.django_db
def test_access_tracking_is_enqueued_after_commit(agent, end_user, store, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks, CaptureQueriesContext(connection) as queries:
        hits = facts_search(agent=agent, user=end_user, query="QX-4471", mode="text")

    assert hits and len(callbacks) == 1
    assert not any(query["sql"].lstrip().upper().startswith("UPDATE") for query in queries.captured_queries)
