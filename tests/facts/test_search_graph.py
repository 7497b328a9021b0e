"""The graph signal of fact search (issue 27): the entities a query names expand one or two relations out to the
facts about related entities, fused as `graph_rank`; switched off it changes nothing; another user's or agent's
entities never expand. And facts written outside formation join the graph: an import parses them itself, an API write
is parsed by a worker."""

from __future__ import annotations

import json
import time

import pytest

from facts.models import Entity, EntityType, Fact, Relation
from facts.selectors import facts_search
from facts.selectors.graph_search import HUB_RELATIONS, query_names
from facts.services.facts import fact_create
from facts.services.graph import EntityMention, RelationStatement, fact_relations_write
from portability.records import ImportedFact, MemoryImport
from portability.services.importer import memories_import
from tests.factories import AgentFactory, EndUserFactory
from tests.facts.search_support import fact_stating, person


def _likes(count: int) -> list[RelationStatement]:
    """Tom likes `count` things: enough makes him a hub."""
    return [RelationStatement(person("Tom"), "likes", value=f"thing {number}") for number in range(count)]


def _ranks(hits) -> dict[int, int | None]:
    return {hit.fact.pk: hit.graph_rank for hit in hits}


def test_query_names_are_word_ngrams_with_possessives_and_my_read_as_the_users():
    names = query_names("Where does Maria's friend work? Ask my sister.")

    assert {"maria", "maria's friend", "where does maria's friend", "the user's sister"} <= set(names)
    assert "" not in names


@pytest.mark.django_db
def test_a_fact_two_relations_from_the_named_entity_is_ranked_by_the_graph(agent, end_user, chain, settings):
    settings.MEMORY_GRAPH_HOPS = 2
    hits = facts_search(agent=agent, user=end_user, query="Where could Maria visit her friend's office?", top_k=9)

    ranks = _ranks(hits)
    assert ranks[chain["friend"].pk] == 1  # the named entity's own relation: 0 hops
    assert ranks[chain["job"].pk] == 2  # Tom's: 1 hop
    assert ranks[chain["city"].pk] == 3  # Acme's: 2 hops
    assert all(rank is None for pk, rank in ranks.items() if pk not in {fact.pk for fact in chain.values()})

    settings.MEMORY_GRAPH_HOPS = 1
    one_hop = _ranks(facts_search(agent=agent, user=end_user, query="Where could Maria visit her friend's office?"))
    assert one_hop.get(chain["city"].pk) is None and one_hop[chain["job"].pk] == 2


@pytest.mark.django_db
def test_the_graph_lifts_the_related_fact_above_where_the_other_signals_put_it(agent, end_user, chain, settings):
    query = "Where could Maria visit her friend's office?"
    settings.MEMORY_GRAPH_WEIGHT = 0
    without = [hit.fact.pk for hit in facts_search(agent=agent, user=end_user, query=query, top_k=9)]
    settings.MEMORY_GRAPH_WEIGHT = 1.0
    with_graph = [hit.fact.pk for hit in facts_search(agent=agent, user=end_user, query=query, top_k=9)]

    assert with_graph.index(chain["city"].pk) < without.index(chain["city"].pk)


@pytest.mark.django_db
def test_switched_off_the_graph_changes_nothing(agent, end_user, chain, settings):
    query = "Where could Maria visit her friend's office?"
    settings.MEMORY_GRAPH_WEIGHT = 0
    switched_off = [(h.fact.pk, h.score, h.graph_rank) for h in facts_search(agent=agent, user=end_user, query=query)]
    Relation.objects.all().delete()
    Entity.objects.all().delete()
    settings.MEMORY_GRAPH_WEIGHT = 1.0
    no_graph = [(h.fact.pk, h.score, h.graph_rank) for h in facts_search(agent=agent, user=end_user, query=query)]

    assert switched_off == no_graph
    assert all(rank is None for _, _, rank in switched_off)


@pytest.mark.django_db
def test_a_hub_neither_starts_nor_carries_the_walk(agent, end_user, chain):
    """Tom, named in more relations than HUB_RELATIONS, says as little as a word in every document."""
    fact_relations_write(fact=chain["job"], statements=_likes(HUB_RELATIONS), source_messages=[])

    assert all(hit.graph_rank is None for hit in facts_search(agent=agent, user=end_user, query="What does Tom do?"))
    ranks = _ranks(facts_search(agent=agent, user=end_user, query="Where could Maria visit her friend's office?"))
    assert ranks[chain["friend"].pk] == 1 and ranks.get(chain["city"].pk) is None  # not walked through Tom


@pytest.mark.django_db
def test_a_hub_named_with_other_words_brings_its_relations_those_words_pick(agent, end_user, chain):
    """Naming a hub says little; naming it with what it did ("camped") picks the hub's relations that say it."""
    beach = fact_stating(
        agent,
        end_user,
        "Tom spent a weekend by the sea",
        RelationStatement(person("Tom"), "camped_at", EntityMention(name="Beach", entity_type=EntityType.PLACE)),
    )
    forest = fact_stating(
        agent,
        end_user,
        "Tom slept under the pines",
        RelationStatement(person("Tom"), "camped_in", EntityMention(name="Black Forest", entity_type=EntityType.PLACE)),
    )
    fact_relations_write(fact=chain["job"], statements=_likes(HUB_RELATIONS), source_messages=[])

    ranks = _ranks(facts_search(agent=agent, user=end_user, query="Where has Tom camped?", top_k=20))

    assert {ranks[beach.pk], ranks[forest.pk]} == {1, 2}
    assert all(rank is None for pk, rank in ranks.items() if pk not in {beach.pk, forest.pk})
    assert all(hit.graph_rank is None for hit in facts_search(agent=agent, user=end_user, query="Where is Tom?"))
    operators = facts_search(agent=agent, user=end_user, query="Tom's camp & | ! :* (café)?", top_k=20)
    assert {pk for pk, rank in _ranks(operators).items() if rank} == {beach.pk, forest.pk}


@pytest.mark.django_db
def test_single_signal_modes_keep_to_their_signal(agent, end_user, chain):
    for mode in ("semantic", "text"):
        hits = facts_search(agent=agent, user=end_user, query="Maria", mode=mode)
        assert all(hit.graph_rank is None for hit in hits)


@pytest.mark.django_db
def test_another_users_or_agents_entities_never_expand(agent, end_user, chain):
    """The shared fact is visible to the user, but only the other user's and the other agent's "Maria" lead to it."""
    shared = fact_create(agent=agent, user=None, scopes=["agent"], content="The office kitchen closes at six")
    other_user = EndUserFactory(agent=agent)
    other_agent = AgentFactory()
    for owner_agent, owner in ((agent, other_user), (other_agent, None)):
        runs = RelationStatement(EntityMention("Maria Lopez", aliases=("lopez",)), "runs", EntityMention("Kitchen"))
        fact = fact_create(
            agent=owner_agent, user=owner, scopes=["user" if owner else "agent"], content="Maria Lopez runs the kitchen"
        )
        [relation] = fact_relations_write(fact=fact, statements=[runs], source_messages=[])
        relation.source_facts.add(shared)  # a tie across scopes that no writer makes: the walk must not follow it

    hits = facts_search(agent=agent, user=end_user, query="What does Lopez run?", top_k=20)

    assert all(hit.graph_rank is None for hit in hits)
    assert Relation.objects.filter(source_facts=shared).count() == 2


@pytest.mark.django_db
def test_the_api_reports_graph_rank_per_hit_and_its_time(api, end_user, chain):
    response = api.post(
        "/api/v1/memory/search",
        {"query": "Where could Maria visit her friend's office?", "user": end_user.external_id, "top_k": 9},
        content_type="application/json",
    )

    assert response.status_code == 200, response.json()
    results = response.json()["results"]
    assert all("graph_rank" in hit for hit in results)
    by_id = {hit["fact"]["id"]: hit["graph_rank"] for hit in results}
    assert by_id[chain["city"].pk] == 3
    assert "graph_sql" in response["Server-Timing"]


@pytest.mark.django_db
def test_imported_facts_join_the_graph_with_the_offline_extractor(agent, end_user):
    imported = MemoryImport(
        format="mem0",
        source="test",
        agent_external_id=agent.external_id,
        facts=[
            ImportedFact(
                original_id=str(number), content=content, user_external_id=end_user.external_id, scopes=("user",)
            )
            for number, content in enumerate(["Caroline works at Lumen Labs", "Lumen Labs is in Porto"])
        ],
    )

    report = memories_import(imports=[imported])

    assert report.counts["relations"]["written"] >= 2
    caroline = Entity.objects.get(agent=agent, user=end_user, aliases__contains=["caroline"])
    hits = facts_search(agent=agent, user=end_user, query="Which city is Caroline's employer in?", top_k=2)
    assert caroline.entity_type == EntityType.PERSON
    assert {hit.fact.content for hit in hits if hit.graph_rank} == {
        "Caroline works at Lumen Labs",
        "Lumen Labs is in Porto",
    }


@pytest.mark.django_db(transaction=True)
def test_a_fact_written_through_the_api_is_parsed_into_the_graph_by_a_worker(api, end_user, celery_worker_process):
    response = api.post(
        "/api/v1/facts",
        json.dumps({"content": "Caroline works at Lumen Labs", "user": end_user.external_id, "scopes": ["user"]}),
        content_type="application/json",
    )

    assert response.status_code == 201, response.json()
    fact = Fact.objects.get(pk=response.json()["id"])
    relation = _wait_for(lambda: Relation.objects.filter(source_facts=fact).select_related("object_entity").first())
    assert (relation.predicate, relation.object_entity.name) == ("works_at", "Lumen Labs")


def _wait_for(read, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = read()
        if found is not None:
            return found
        time.sleep(0.2)
    raise AssertionError("the worker did not write it in time")
