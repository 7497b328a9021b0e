"""The LangChain adapters (clients/python, real langchain-core base classes) against a live server: the chat history
posts turns that memory then forms from (the LLM replaced by the scripted fake), the retriever returns the formed
fact, both sync and async, inside a RunnableWithMessageHistory too, and key A never reaches agent B."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory

from agents.models import Agent
from conversations.models import Message, Session
from facts.models import Fact
from tests.factories import AgentFactory
from tests.fakes import facts_reply
from tests.formation_support import session_form_memories
from tests.memory_client_support import AsyncMemoryClient, MemoryClient, api_key_for

# isort: split
from memory_client.langchain_memory import (  # importable once memory_client_support ran
    AgentMemoryChatMessageHistory,
    AgentMemoryRetriever,
)


@pytest.fixture
def keys(db) -> dict[str, tuple[Agent, str]]:
    agents = {name: AgentFactory(external_id=f"agent-{name}") for name in ("a", "b")}
    return {name: (agent, api_key_for(agent=agent)) for name, agent in agents.items()}


@pytest.mark.django_db(transaction=True)
def test_the_history_posts_turns_once_and_reads_them_back(live_server, keys):
    agent, key = keys["a"]
    history = AgentMemoryChatMessageHistory(live_server.url, key, user="gene", session="chat-1")
    turns = [
        SystemMessage("You are a cooking assistant.", id="s-1"),
        HumanMessage("Which cheese goes with pears?", id="h-1", name="Gene"),
        AIMessage("Gorgonzola.", id="a-1"),
        AIMessage("", tool_calls=[{"name": "find_recipes", "args": {"q": "pear"}, "id": "call-7"}], id="a-2"),
        ToolMessage("3 recipes found", tool_call_id="call-7", id="t-1"),
        ChatMessage(role="critic", content="Good pairing.", id="c-1"),
    ]

    before = history.messages
    history.add_messages(turns)
    history.add_messages(turns[:2])  # a retried run: the same messages (same ids) are stored once
    read = history.messages

    assert before == []
    assert [(type(m).__name__, m.content) for m in read] == [(type(m).__name__, m.content) for m in turns]
    assert read[1].name == "Gene" and read[4].tool_call_id == "call-7" and read[5].role == "critic"
    assert read[3].tool_calls == turns[3].tool_calls and read[3].content == ""
    assert [m.id for m in read] == ["s-1", "h-1", "a-1", "a-2", "t-1", "c-1"]
    stored = Message.objects.filter(session__agent=agent).order_by("pk")
    assert [m.role for m in stored] == ["system", "user", "assistant", "assistant", "tool", "other"]
    assert stored[3].content == 'called find_recipes({"q": "pear"})'  # what the model did, as the turn's text
    assert Session.objects.get(agent=agent, external_id="chat-1").user.external_id == "gene"
    with pytest.raises(NotImplementedError, match="new session id"):
        history.clear()


@pytest.mark.django_db(transaction=True)
@pytest.mark.filterwarnings("ignore::langchain_core._api.deprecation.LangChainDeprecationWarning")
def test_the_history_inside_a_runnable_with_message_history_async(live_server, keys):
    agent, key = keys["a"]

    def chat(messages):
        return AIMessage(f"You said {len(messages)} thing(s) so far.")

    async def scenario():
        async with AsyncMemoryClient(live_server.url, key) as memory:
            chain = RunnableWithMessageHistory(
                RunnableLambda(chat),
                lambda session_id: AgentMemoryChatMessageHistory(user="gene", session=session_id, async_client=memory),
            )
            config = {"configurable": {"session_id": "chat-2"}}
            first = await chain.ainvoke([HumanMessage("Hello!")], config=config)
            second = await chain.ainvoke([HumanMessage("I live in Lyon.")], config=config)
            read = await AgentMemoryChatMessageHistory(
                user="gene", session="chat-2", async_client=memory
            ).aget_messages()
            return first, second, read

    first, second, read = asyncio.run(scenario())

    assert first.content == "You said 1 thing(s) so far." and second.content == "You said 3 thing(s) so far."
    assert [m.content for m in read] == ["Hello!", first.content, "I live in Lyon.", second.content]
    assert Message.objects.filter(session__agent=agent, session__external_id="chat-2").count() == 4


async def _ainvoke_and_close(retriever: AgentMemoryRetriever, query: str):
    try:
        return await retriever.ainvoke(query)
    finally:
        await retriever.aclose()


@pytest.mark.django_db(transaction=True)
def test_turns_the_history_posted_form_memory_the_retriever_returns(live_server, keys, scripted_llm):
    agent, key = keys["a"]
    history = AgentMemoryChatMessageHistory(live_server.url, key, user="gene", session="chat-3")

    async def converse() -> None:
        turns = [HumanMessage("My daughter Lea starts school in Bern in August."), AIMessage("Exciting!")]
        await history.aadd_messages(turns)
        await history.aclose()  # the async client it made for this event loop

    asyncio.run(converse())
    MemoryClient(live_server.url, key).fact_create(content="Support is open 9am to 5pm CET.")
    scripted_llm.script("extract_facts", facts_reply("Gene's daughter Lea starts school in Bern in August."))

    session_form_memories(session_id=Session.objects.get(agent=agent, external_id="chat-3").pk, trigger="closed")
    retriever = AgentMemoryRetriever(base_url=live_server.url, api_key=key, user="gene", top_k=1)
    documents = retriever.invoke("Where will Lea go to school?")
    async_documents = asyncio.run(_ainvoke_and_close(retriever, "Where will Lea go to school?"))
    agent_wide = AgentMemoryRetriever(
        client=MemoryClient(live_server.url, key), user="gene", options={"scopes": ["agent"]}
    ).invoke("opening hours")

    (extraction,) = scripted_llm.calls("extract_facts")
    assert "starts school in Bern" in str(extraction.messages)  # formed from the turns the history posted
    fact = Fact.objects.get(agent=agent, content="Gene's daughter Lea starts school in Bern in August.")
    assert fact.source_session.external_id == "chat-3"
    (document,) = documents
    assert document.page_content == fact.content and document.id == str(fact.pk)
    assert document.metadata["id"] == fact.pk and document.metadata["scope"] == "user"
    assert document.metadata["scopes"] == ["user"] and document.metadata["user"] == "gene"
    assert document.metadata["score"] > 0 and document.metadata["vector_rank"] == 1
    assert {"text_rank", "time_rank", "similarity", "lineage", "version", "valid_from"} <= set(document.metadata)
    assert [(d.page_content, d.metadata) for d in async_documents] == [(document.page_content, document.metadata)]
    assert [d.page_content for d in agent_wide] == ["Support is open 9am to 5pm CET."]
    assert agent_wide[0].metadata["scope"] == "agent"


@pytest.mark.django_db(transaction=True)
def test_key_a_never_reaches_agent_b_through_the_history_or_the_retriever(live_server, keys):
    key_a, key_b = keys["a"][1], keys["b"][1]
    AgentMemoryChatMessageHistory(live_server.url, key_a, user="gene", session="chat-4").add_messages(
        [HumanMessage("My favourite colour is teal.")]
    )
    MemoryClient(live_server.url, key_a).fact_create(content="Gene's favourite colour is teal.", user="gene")
    MemoryClient(live_server.url, key_a).fact_create(content="Agent A's opening hours are 9 to 5.")

    seen_by_b = AgentMemoryChatMessageHistory(live_server.url, key_b, user="gene", session="chat-4").messages
    found_by_b = AgentMemoryRetriever(base_url=live_server.url, api_key=key_b, user="gene").invoke("favourite colour")
    agent_wide_by_b = AgentMemoryRetriever(base_url=live_server.url, api_key=key_b).invoke("opening hours")

    assert seen_by_b == [] and found_by_b == [] and agent_wide_by_b == []
