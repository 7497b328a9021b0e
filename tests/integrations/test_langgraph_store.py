"""AgentMemoryStore (clients/python, a real langgraph BaseStore) against a live server: a compiled graph across two
runs, every store operation sync and async, what is refused, and tenant isolation (key A never reaches agent B)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import GetOp, InvalidNamespaceError, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from agents.models import Agent
from facts.models import Fact
from facts.services.curation import fact_get_or_create
from tests.factories import AgentFactory, EndUserFactory
from tests.memory_client_support import MemoryAPIError, api_key_for

# isort: split
from memory_client.langgraph_store import AgentMemoryStore  # importable once memory_client_support ran


@pytest.fixture
def keys(db) -> dict[str, tuple[Agent, str]]:
    agents = {name: AgentFactory(external_id=f"agent-{name}") for name in ("a", "b")}
    return {name: (agent, api_key_for(agent=agent)) for name, agent in agents.items()}


@pytest.fixture
def store(live_server, keys) -> AgentMemoryStore:
    return AgentMemoryStore(live_server.url, keys["a"][1])


@dataclass
class Context:
    user_id: str


class State(TypedDict, total=False):
    message: str
    memories: list[str]


def _graph(store: AgentMemoryStore, *, asynchronous: bool):
    """A graph whose nodes use the store LangGraph hands them: through its sync methods (graph.invoke), or its async
    ones (graph.ainvoke)."""

    def remember(state: State, runtime: Runtime[Context]) -> State:
        if state["message"].startswith("Remember: "):
            statement = state["message"].removeprefix("Remember: ")
            runtime.store.put(("users", runtime.context.user_id, "notes"), "sister", {"content": statement})
        return {}

    def recall(state: State, runtime: Runtime[Context]) -> State:
        hits = runtime.store.search(("users", runtime.context.user_id), query=state["message"], limit=5)
        return {"memories": [hit.value["content"] for hit in hits]}

    async def aremember(state: State, runtime: Runtime[Context]) -> State:
        if state["message"].startswith("Remember: "):
            statement = state["message"].removeprefix("Remember: ")
            await runtime.store.aput(("users", runtime.context.user_id, "notes"), "sister", {"content": statement})
        return {}

    async def arecall(state: State, runtime: Runtime[Context]) -> State:
        hits = await runtime.store.asearch(("users", runtime.context.user_id), query=state["message"], limit=5)
        return {"memories": [hit.value["content"] for hit in hits]}

    builder = StateGraph(State, context_schema=Context)
    builder.add_node("remember", aremember if asynchronous else remember)
    builder.add_node("recall", arecall if asynchronous else recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    return builder.compile(store=store)


async def _arun(graph, state: State, *, user: str) -> State:
    try:
        return await graph.ainvoke(state, context=Context(user_id=user))
    finally:
        await graph.store.aclose()  # the async client the store made for this event loop


@pytest.mark.django_db(transaction=True)
def test_a_graph_finds_in_its_second_run_what_its_first_saved(live_server, keys):
    key = keys["a"][1]
    said = {"message": "Remember: Gene's sister is Maya."}
    asyncio.run(_arun(_graph(AgentMemoryStore(live_server.url, key), asynchronous=True), said, user="gene"))
    asked = {"message": "Who is my sister?"}
    other_user = _graph(AgentMemoryStore(live_server.url, key), asynchronous=False).invoke(
        asked, context=Context(user_id="ana")
    )

    # A new store and a new graph: nothing but the service carries the memory from one run to the next.
    found = _graph(AgentMemoryStore(live_server.url, key), asynchronous=False).invoke(
        asked, context=Context(user_id="gene")
    )
    found_async = asyncio.run(
        _arun(_graph(AgentMemoryStore(live_server.url, key), asynchronous=True), asked, user="gene")
    )

    assert found["memories"] == found_async["memories"] == ["Gene's sister is Maya."]
    assert other_user["memories"] == []
    assert Fact.objects.get(agent=keys["a"][0]).user.external_id == "gene"


@pytest.mark.django_db(transaction=True)
def test_put_get_search_delete_and_list_namespaces(store, keys):
    gene = ("users", "gene")
    store.put((*gene, "food"), "diet", {"content": "Gene is vegetarian.", "since": 2019})
    store.put((*gene, "food", "dislikes"), "olives", {"text": "Gene dislikes olives.", "strength": 3})
    store.put((*gene, "travel"), "trip", {"memory": "Gene visited Lisbon in May.", "strength": 5})
    store.put(("agent", "policies"), "hours", {"content": "Support is open 9am to 5pm CET."})

    item = store.get((*gene, "food"), "diet")
    in_food = store.search((*gene, "food"))
    by_query = store.search(gene, query="What does Gene eat?", limit=2)
    strong = store.search(gene, filter={"strength": {"$gte": 4}})
    exact = store.search(gene, filter={"strength": 3})
    paged = [store.search(gene, limit=1, offset=offset)[0].key for offset in range(3)]
    agent_wide = store.search(("agent",), query="opening hours")

    assert item is not None and item.value == {"content": "Gene is vegetarian.", "since": 2019}
    assert item.namespace == (*gene, "food") and item.key == "diet" and item.created_at <= item.updated_at
    assert {found.key for found in in_food} == {"diet", "olives"}  # a prefix finds the collections below it
    assert by_query[0].key == "diet" and by_query[0].score is not None and len(by_query) == 2
    assert [found.key for found in strong] == ["trip"] and [found.key for found in exact] == ["olives"]
    assert sorted(paged) == ["diet", "olives", "trip"]
    assert [found.key for found in agent_wide] == ["hours"] and agent_wide[0].namespace == ("agent", "policies")

    store.put((*gene, "food"), "diet", {"content": "Gene is vegan.", "since": 2024})
    versions_before = Fact.objects.filter(agent=keys["a"][0]).count()
    store.put((*gene, "food"), "diet", {"content": "Gene is vegan.", "since": 2024})  # unchanged: no new version
    updated = store.get((*gene, "food"), "diet")

    assert updated.value == {"content": "Gene is vegan.", "since": 2024} and updated.created_at == item.created_at
    assert Fact.objects.filter(agent=keys["a"][0]).count() == versions_before
    lineage = Fact.objects.get(agent=keys["a"][0], content="Gene is vegan.").lineage
    assert list(Fact.objects.filter(lineage=lineage).order_by("version").values_list("content", flat=True)) == [
        "Gene is vegetarian.",
        "Gene is vegan.",
    ]

    assert store.list_namespaces() == [
        ("agent", "policies"),
        ("users", "gene", "food"),
        ("users", "gene", "food", "dislikes"),
        ("users", "gene", "travel"),
    ]
    assert store.list_namespaces(prefix=("users", "*"), max_depth=3) == [
        ("users", "gene", "food"),
        ("users", "gene", "travel"),
    ]
    assert store.list_namespaces(suffix=("dislikes",)) == [("users", "gene", "food", "dislikes")]
    assert store.list_namespaces(limit=1, offset=1) == [("users", "gene", "food")]

    store.delete((*gene, "food"), "diet")
    store.delete((*gene, "food"), "never-put")  # nothing to delete is not an error, as in LangGraph's stores

    assert store.get((*gene, "food"), "diet") is None
    closed = Fact.objects.get(agent=keys["a"][0], lineage=lineage, content="Gene is vegan.")
    assert closed.valid_to is not None and "LangGraph" in closed.closed_reason  # kept as history


@pytest.mark.django_db(transaction=True)
def test_memory_the_service_formed_is_found_at_a_scope_root(store, keys):
    agent = keys["a"][0]
    formed, _ = fact_get_or_create(
        agent=agent,
        user=EndUserFactory(agent=agent, external_id="gene"),
        scopes=["user"],
        content="Gene plays the cello.",
        written_by="formation",
    )

    hits = store.search(("users", "gene"), query="Which instrument does Gene play?")
    got = store.get(("users", "gene"), f"fact-{formed.pk}")
    store.put(("users", "gene"), f"fact-{formed.pk}", {"content": "Gene plays the viola."})

    assert [(hit.key, hit.value) for hit in hits] == [(f"fact-{formed.pk}", {"content": "Gene plays the cello."})]
    assert got is not None and got.value == {"content": "Gene plays the cello."}
    assert Fact.objects.get(lineage=formed.lineage, valid_to__isnull=True).content == "Gene plays the viola."
    assert store.get(("users", "gene"), f"fact-{formed.pk}") is None  # that version is closed now
    assert store.get(("users", "ana"), f"fact-{formed.pk}") is None  # another user's namespace


@pytest.mark.django_db(transaction=True)
def test_abatch_runs_every_kind_of_operation_in_order(store):
    gene = ("users", "gene", "notes")

    async def scenario():
        results = await store.abatch(
            [
                PutOp(gene, "pet", {"content": "Gene has a dog named Rex."}),
                GetOp(gene, "pet"),
                SearchOp(("users", "gene"), query="pets"),
                ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("users",)),)),
                PutOp(gene, "pet", None),
                GetOp(gene, "pet"),
            ]
        )
        await store.aclose()
        return results

    put, got, found, namespaces, deleted, gone = asyncio.run(scenario())

    assert put is None and deleted is None and gone is None
    assert got.value == {"content": "Gene has a dog named Rex."}
    assert [item.key for item in found] == ["pet"] and namespaces == [gene]


@pytest.mark.django_db(transaction=True)
def test_what_the_store_refuses_stores_nothing(store, keys):
    with pytest.raises(InvalidNamespaceError, match="'agent'"):
        store.put(("memories", "gene"), "k", {"content": "Gene likes jazz."})
    with pytest.raises(InvalidNamespaceError):
        store.search(("users",), query="jazz")
    with pytest.raises(ValueError, match="content, text, memory, data"):
        store.put(("users", "gene"), "k", {"likes": ["jazz"]})
    with pytest.raises(NotImplementedError):
        store.put(("users", "gene"), "k", {"content": "Gene likes jazz."}, ttl=5)
    with pytest.raises(MemoryAPIError) as too_long:
        store.put(("users", "gene"), "k", {"content": "word " * 40})
    with pytest.raises(MemoryAPIError) as too_big:
        store.put(("users", "gene"), "k", {"content": "Gene likes jazz.", "blob": "x" * 70_000})

    assert too_long.value.status == 400 and "content" in too_long.value.fields
    assert too_big.value.status == 400 and "metadata" in too_big.value.fields
    assert not Fact.objects.filter(agent=keys["a"][0]).exists()


@pytest.mark.django_db(transaction=True)
def test_the_same_statement_under_two_keys_is_one_fact_both_keys_reach(store, keys):
    store.put(("users", "gene"), "first", {"content": "Gene was born in Porto."})
    store.put(("users", "gene", "bio"), "second", {"content": "Gene was born in Porto."})

    first, second = store.get(("users", "gene"), "first"), store.get(("users", "gene", "bio"), "second")

    assert first.value == second.value == {"content": "Gene was born in Porto."}
    assert Fact.objects.filter(agent=keys["a"][0], valid_to__isnull=True).count() == 1


@pytest.mark.django_db(transaction=True)
def test_key_a_never_reaches_agent_b_through_the_store(live_server, keys):
    store_a = AgentMemoryStore(live_server.url, keys["a"][1])
    store_b = AgentMemoryStore(live_server.url, keys["b"][1])
    store_a.put(("users", "gene", "notes"), "secret", {"content": "Gene's favourite colour is teal."})
    store_a.put(("agent",), "policy", {"content": "Agent A never offers refunds."})
    fact_ids = list(Fact.objects.filter(agent=keys["a"][0]).values_list("pk", flat=True))

    assert store_b.get(("users", "gene", "notes"), "secret") is None
    assert store_b.search(("users", "gene"), query="favourite colour") == []
    assert store_b.search(("users", "gene")) == [] and store_b.search(("agent",), query="refunds") == []
    assert store_b.list_namespaces() == []
    assert all(store_b.get(("users", "gene"), f"fact-{pk}") is None for pk in fact_ids)
    assert all(store_b.get(("agent",), f"fact-{pk}") is None for pk in fact_ids)
    store_b.delete(("users", "gene", "notes"), "secret")
    assert store_a.get(("users", "gene", "notes"), "secret").value == {"content": "Gene's favourite colour is teal."}
