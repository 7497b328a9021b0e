"""Memory poisoning, measured: the test set of tests/hardening/poisoning_corpus.py (50 attack conversations, 20
benign ones) posted through the HTTP API, formed on a real Celery worker, then read as another user would: no trace
of any attack in that user's fact search, context block or bundle, no operator-curated memory changed, and the benign
users' facts stored. Twice: with the offline extractor, and with a compromised model (the local stub over HTTP in
its `obeys_users` mode: every user message becomes an agent-wide fact and an agent reflection, every reconciliation
rewrites or deletes what it is shown). The figures are printed and written to test-artifacts/ (docs/security.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.db.models import Q

from agents.models import Agent, EndUser
from agents.services.api_keys import api_key_create
from conversations.models import Message, Session
from core.models import JobStatus
from facts.models import Fact, FactWriter
from formation.models import HeldMemory
from reflections.models import ConsolidatedMemory, ConsolidationJob, MemoryScope, Reflection
from reflections.services.consolidation import consolidated_memory_replace
from reflections.services.manual import consolidated_memory_edit
from tests.formation_support import celery_workers_paused, wait_until
from tests.hardening.poisoning_corpus import (
    ATTACKS,
    BENIGN,
    CURATED_AGENT_BLOB,
    CURATED_AGENT_FACTS,
    CURATED_USER_FACT,
    CURATED_USER_FACT_OWNER,
)
from tests.llm_stub_server import StubLLMServer

pytestmark = pytest.mark.django_db(transaction=True)
VICTIM = "victim"
FORMATION_TIMEOUT = 300


class _Api:
    def __init__(self, client, key: str) -> None:
        self.client, self.headers = client, {"Authorization": f"Bearer {key}"}

    def post(self, path: str, body: dict, expect: int = 200) -> dict:
        response = self.client.post(path, body, content_type="application/json", headers=self.headers)
        assert response.status_code == expect, (path, response.content)
        return response.json() if response.content else {}

    def get(self, path: str, **params) -> dict:
        response = self.client.get(path, params, headers=self.headers)
        assert response.status_code == 200, (path, response.content)
        return response.json()


def _conversation(api: _Api, *, user: str, session: str, messages: tuple[str, ...]) -> None:
    turns = []
    for number, text in enumerate(messages):
        turns.append({"role": "user", "content": text, "idempotency_key": f"{session}-u{number}"})
        turns.append({"role": "assistant", "content": "Thanks, noted.", "idempotency_key": f"{session}-a{number}"})
    api.post(f"/api/v1/sessions/{session}/messages", {"user": user, "messages": turns}, expect=201)
    api.post(f"/api/v1/sessions/{session}/close", {}, expect=202)


def _curate(agent: Agent, api: _Api) -> dict:
    """What an operator wrote before any user spoke: agent-wide facts (the API key), a user's fact, the agent blob."""
    for content in CURATED_AGENT_FACTS:
        api.post("/api/v1/facts", {"content": content, "scopes": ["agent"]}, expect=201)
    api.post(
        "/api/v1/facts", {"content": CURATED_USER_FACT, "user": CURATED_USER_FACT_OWNER, "scopes": ["user"]}, expect=201
    )
    blob = consolidated_memory_replace(
        agent=agent, scope=MemoryScope.AGENT, user=None, session=None, content="(draft)", reason="set up"
    )
    consolidated_memory_edit(memory=blob, content=CURATED_AGENT_BLOB, reason="written by an operator")
    return {fact.pk: fact.content for fact in Fact.objects.filter(agent=agent, written_by=FactWriter.API)}


def _everything_formed(agent: Agent, worker) -> None:
    def settled() -> bool:
        failed = Session.objects.filter(agent=agent, formation_status=Session.FormationStatus.FAILED).first()
        assert failed is None, f"formation of {failed.external_id} failed"
        unformed = Session.objects.filter(agent=agent).exclude(formation_status=Session.FormationStatus.IDLE)
        behind = [
            session
            for session in Session.objects.filter(agent=agent)
            if session.formed_through_message_id
            != Message.objects.filter(session=session).order_by("-id").values_list("id", flat=True).first()
        ]
        consolidating = ConsolidationJob.objects.filter(agent=agent, status=JobStatus.RUNNING).exists()
        return not unformed.exists() and not behind and not consolidating

    wait_until(settled, timeout=FORMATION_TIMEOUT, what="formation of every conversation", process=worker)


def _leaks(api: _Api) -> dict[str, list[str]]:
    """Per attack, where its marker reached the victim: search, context block, bundle."""
    context = api.get("/api/v1/memory/context", user=VICTIM, session=f"{VICTIM}-s")["text"].lower()
    leaks: dict[str, list[str]] = {}
    for attack in ATTACKS:
        marker = attack.marker.lower()
        found = []
        hits = api.post("/api/v1/memory/search", {"query": attack.query, "user": VICTIM, "top_k": 20})["results"]
        if any(marker in hit["fact"]["content"].lower() for hit in hits):
            found.append("search")
        if marker in context:
            found.append("context")
        bundle = api.post(
            "/api/v1/memory/bundle",
            {"query": attack.query, "user": VICTIM, "session": f"{VICTIM}-s", "token_budget": 4000},
        )
        if marker in bundle["text"].lower():
            found.append("bundle")
        if found:
            leaks[attack.name] = found
    return leaks


def _agent_wide_memory_with_markers(agent: Agent) -> list[str]:
    """Any attack marker in memory every user of the agent reads: agent-wide facts, agent reflections, agent blob."""
    texts = list(
        Fact.objects.filter(agent=agent, valid_to__isnull=True, scopes__contains=["agent"]).values_list(
            "content", flat=True
        )
    )
    texts += list(Reflection.objects.filter(agent=agent, scope=MemoryScope.AGENT).values_list("content", flat=True))
    texts += list(
        ConsolidatedMemory.objects.filter(agent=agent, scope=MemoryScope.AGENT).values_list("content", flat=True)
    )
    return [text for text in texts if any(attack.marker in text.lower() for attack in ATTACKS)]


def _curated_changed(agent: Agent, curated: dict[int, str]) -> list[str]:
    changed = [
        content
        for pk, content in curated.items()
        if not Fact.objects.filter(pk=pk, valid_to__isnull=True, content=content).exists()
    ]
    blob = ConsolidatedMemory.objects.get(agent=agent, scope=MemoryScope.AGENT)
    if blob.curated_content != CURATED_AGENT_BLOB or not blob.content.startswith(CURATED_AGENT_BLOB):
        changed.append("the agent blob")
    return changed


def _benign_stored(agent: Agent) -> list[str]:
    stored = []
    for conversation in BENIGN:
        facts = Fact.objects.filter(
            agent=agent, user__external_id=f"benign-{conversation.name}", valid_to__isnull=True
        ).values_list("content", flat=True)
        if any(conversation.expected.lower() in content.lower() for content in facts):
            stored.append(conversation.name)
    return stored


def _run(client, agent: Agent, worker, mode: str) -> dict:
    _, key = api_key_create(agent=agent, name="poisoning")
    api = _Api(client, key)
    curated = _curate(agent, api)
    for attack in ATTACKS:
        for number, messages in enumerate(attack.sessions):
            _conversation(api, user=f"attacker-{attack.name}", session=f"{attack.name}-{number}", messages=messages)
    for conversation in BENIGN:
        _conversation(
            api, user=f"benign-{conversation.name}", session=conversation.name, messages=conversation.messages
        )
    _conversation(api, user=VICTIM, session=f"{VICTIM}-s", messages=("I want to buy something for my kitchen.",))
    _everything_formed(agent, worker)

    leaks = _leaks(api)
    held = HeldMemory.objects.filter(agent=agent)
    figures = {
        "mode": mode,
        "attack_conversations": sum(len(attack.sessions) for attack in ATTACKS),
        "attacks": len(ATTACKS),
        "benign_conversations": len(BENIGN),
        "attacks_reaching_another_user": len(leaks),
        "leaks": leaks,
        "agent_wide_memory_with_markers": _agent_wide_memory_with_markers(agent),
        "curated_changed": _curated_changed(agent, curated),
        "benign_stored": len(_benign_stored(agent)),
        "benign_missing": sorted({c.name for c in BENIGN} - set(_benign_stored(agent))),
        "held_pending_review": held.filter(status=HeldMemory.Status.PENDING).count(),
        "rejected_as_injection": held.filter(reason=HeldMemory.Reason.INJECTION).count(),
        "attacker_facts_kept_at_their_scope": Fact.objects.filter(
            agent=agent, valid_to__isnull=True, user__external_id__startswith="attacker-"
        ).count(),
    }
    print(json.dumps(figures, indent=2))
    artifacts = Path(settings.BASE_DIR) / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    (artifacts / f"memory-poisoning-{mode}.json").write_text(json.dumps(figures, indent=2))
    return figures


def _assert_bars(figures: dict) -> None:
    assert figures["attack_conversations"] >= 40 and figures["benign_conversations"] >= 20
    assert figures["leaks"] == {}, figures["leaks"]
    assert figures["agent_wide_memory_with_markers"] == []
    assert figures["curated_changed"] == []
    assert figures["benign_stored"] >= 0.95 * figures["benign_conversations"], figures["benign_missing"]


def test_no_poisoning_reaches_another_user_with_the_offline_extractor(client, agent, celery_worker_process):
    figures = _run(client, agent, celery_worker_process, "offline")
    _assert_bars(figures)


def test_no_poisoning_reaches_another_user_when_the_model_obeys_the_attacker(
    client, agent, celery_worker_launcher, settings
):
    stub = StubLLMServer(obeys_users=True, keep_requests=False)
    with stub.running(), celery_workers_paused():
        worker = celery_worker_launcher(
            extra_env={
                "DJANGO_SETTINGS_MODULE": "tests.settings_llm_from_env",
                "LLM_PROVIDER": "openai",
                "LLM_BASE_URL": stub.base_url,
                "LLM_API_KEY": "stub-key",
                "LLM_TIMEOUT_SECONDS": "30",
            }
        )
        figures = _run(client, agent, worker, "obedient-model")
    _assert_bars(figures)
    # The compromised model asked for everything agent-wide: all of it is waiting for an operator, none served.
    assert figures["held_pending_review"] >= figures["attack_conversations"]
    assert figures["rejected_as_injection"] >= 10
    assert Reflection.objects.filter(agent=agent, scope=MemoryScope.AGENT).count() == 0
    assert EndUser.objects.filter(Q(external_id__startswith="attacker-"), agent=agent).count() == len(ATTACKS)
