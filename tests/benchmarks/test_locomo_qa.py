"""benchmarks/locomo_qa.py end to end, the path and not a score: a LoCoMo-format sample imported the way the benchmark
imports it, each question's memory read from the live service over HTTP, then answered and judged by the local
OpenAI-compatible LLM stub, and J computed from the judge's labels."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from openai import OpenAI

from agents.models import Agent
from benchmarks.lib.locomo_data import load_conversations
from benchmarks.locomo_qa import QASettings, answer_and_judge, j_scores, judge_label, questions_of
from conversations.models import Message
from conversations.services.message_embeddings import messages_embed_missing
from facts.models import Fact
from facts.services.facts import facts_embed_missing
from tests.llm_stub_server import StubLLMServer, StubReply
from tests.memory_client_support import api_key_for

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "import" / "locomo_sample.json"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("context", ["bundle", "search"])
def test_each_question_gets_the_service_s_memory_an_answer_and_a_judgement(live_server, context):
    call_command("import_memories", str(SAMPLE), "--format", "locomo", "--agent", "qa", stdout=io.StringIO())
    messages_embed_missing(message_ids=list(Message.objects.values_list("id", flat=True)))
    facts_embed_missing(fact_ids=list(Fact.objects.values_list("id", flat=True)))
    agent = Agent.objects.get(external_id="qa-conv-t1")
    conversations = load_conversations(SAMPLE, sample_ids=["conv-t1"])
    questions = questions_of(conversations, {"conv-t1": {"key": api_key_for(agent=agent), "owner": "Ana"}}, limit=None)
    stub = StubLLMServer()
    stub.then(
        StubReply(content="In October"),
        StubReply(content='Both name October. {"label": "CORRECT"}'),
        StubReply(content="Muffin"),
        StubReply(content='Another name than the gold answer. {"label": "WRONG"}'),
    )

    with stub.running():
        llm = OpenAI(base_url=stub.base_url, api_key="stub")
        results = answer_and_judge(
            questions=questions, base_url=live_server.url, llm=llm, settings=QASettings(context=context)
        )

    assert [(judged.gold, judged.answer, judged.label) for judged in results] == [
        ("October", "In October", "CORRECT"),
        ("Bubbles", "Muffin", "WRONG"),
    ]
    assert j_scores(results)["overall"] == {"J": 50.0, "questions": 2}
    answering, judging = stub.requests[0], stub.requests[1]
    assert "Ana signed up for the city marathon in October." in answering.text()  # the service's memory was read
    assert "Question: When is Ana's marathon?" in answering.text()
    assert "Gold answer: October" in judging.text() and "Generated answer: In October" in judging.text()
    assert {request.body["model"] for request in stub.requests} == {"gpt-4o-mini"}


def test_the_judge_s_label_is_read_from_its_json_or_its_one_bare_label():
    assert judge_label('It names the same city. {"label": "CORRECT"}') == "CORRECT"
    assert judge_label('{"label":"wrong"}') == "WRONG"
    assert judge_label("The answer is WRONG.") == "WRONG"
    assert judge_label("Could be CORRECT or WRONG.") == "UNREADABLE"
    assert judge_label("No idea.") == "UNREADABLE"


def test_adversarial_questions_are_left_out_as_in_mem0_s_protocol():
    conversations = load_conversations(SAMPLE, sample_ids=["conv-t1"])
    adversarial = type(conversations[0].questions[0])(
        sample_id="conv-t1", text="What is Ana's cat called?", category="adversarial", evidence=frozenset({"D1:1"})
    )
    conversations[0].questions.append(adversarial)

    chosen = questions_of(conversations, {"conv-t1": {"key": "k", "owner": "Ana"}}, limit=None)

    assert [question.category for question, _, _ in chosen] == ["single-hop", "single-hop"]
