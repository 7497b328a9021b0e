"""docs/integrations.md's Python sections, run as printed (each block in its own process) against a live server, so
the doc cannot rot: the async client, a LangGraph graph whose second run finds what the first saved, and LangChain's
history posting turns that memory then forms from (the LLM replaced by the scripted fake) for its retriever."""

from __future__ import annotations

import pytest

from agents.models import Agent
from conversations.models import Message, Session
from facts.models import Fact
from tests.factories import AgentFactory
from tests.fakes import facts_reply
from tests.formation_support import celery_workers_paused, session_form_memories
from tests.integrations.doc_examples import doc_code_blocks, run_doc_code
from tests.memory_client_support import api_key_for


@pytest.fixture
def agent_key(db) -> tuple[Agent, str]:
    agent = AgentFactory(external_id="agent-docs")
    return agent, api_key_for(agent=agent)


@pytest.mark.django_db(transaction=True)
def test_the_async_client_section_runs_as_printed(live_server, agent_key, tmp_path):
    agent, key = agent_key
    (code,) = doc_code_blocks("Async Python client")

    output = run_doc_code(code, base_url=live_server.url, api_key=key, tmp_path=tmp_path)

    assert "Gene drinks green tea, not coffee." in output.splitlines()[0]
    assert "404 not_found" in output
    assert Message.objects.filter(session__agent=agent, session__external_id="async-demo").count() == 2


@pytest.mark.django_db(transaction=True)
def test_the_langgraph_section_finds_in_run_two_what_run_one_saved(live_server, agent_key, tmp_path):
    agent, key = agent_key
    (code,) = doc_code_blocks("LangGraph")

    output = run_doc_code(code, base_url=live_server.url, api_key=key, tmp_path=tmp_path)

    assert output.strip() == str(["Gene's sister is called Maya."])
    fact = Fact.objects.get(agent=agent, valid_to__isnull=True)
    assert fact.content == "Gene's sister is called Maya." and fact.user.external_id == "gene"
    assert fact.scopes == ["user"] and "langgraph" in fact.tags and "lg-ns:notes" in fact.tags
    assert fact.metadata["langgraph"]["value"] == {"content": "Gene's sister is called Maya.", "source": "chat"}
    assert fact.metadata["langgraph"]["namespace"] == ["users", "gene", "notes"]


@pytest.mark.django_db(transaction=True)
def test_the_langchain_section_posts_turns_memory_forms_from_them_and_the_retriever_finds_it(
    live_server, agent_key, tmp_path, scripted_llm
):
    agent, key = agent_key
    history_code, retriever_code = doc_code_blocks("LangChain")

    # The session's live worker (when an earlier test started it) must not form the closed session first, with the
    # offline LLM: formation runs here, as the worker runs it, with the scripted one.
    with celery_workers_paused():
        posted = run_doc_code(history_code, base_url=live_server.url, api_key=key, tmp_path=tmp_path)
        session = Session.objects.get(agent=agent, external_id="support-chat-1")
        scripted_llm.script("extract_facts", facts_reply("Gene is allergic to peanuts."))
        session_form_memories(session_id=session.pk, trigger="closed")
    retrieved = run_doc_code(retriever_code, base_url=live_server.url, api_key=key, tmp_path=tmp_path)

    assert posted.strip() == str(
        ["Please note that I am allergic to peanuts.", "Noted: no peanuts in any recipe I suggest."]
    )
    assert session.closed_at is not None and session.user.external_id == "gene"
    (extraction,) = scripted_llm.calls("extract_facts")
    assert "allergic to peanuts" in str(extraction.messages)
    assert retrieved.splitlines()[0].startswith("Gene is allergic to peanuts. ")
    assert retrieved.splitlines()[0].endswith(" user")
