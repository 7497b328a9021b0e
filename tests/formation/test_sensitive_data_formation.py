"""Secrets never become memory: formation with the offline extractor and with a model that ignores its prompt, on
this project's test set (tests/fixtures/sensitive/conversations.json), stores no secret in a fact, a reflection or
a blob; benign look-alikes are stored; what was kept out is counted per agent, once per successful job."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.models import Agent
from conversations.models import Session
from conversations.services.ingestion import MessageInput, session_append_messages
from core.llm.client import MalformedLLMOutput
from core.models import SensitiveDataFinding
from core.safety.sensitive import SensitiveDataPolicy, SensitiveKind
from facts.models import Fact
from formation.selectors.sensitive_data import sensitive_data_counts
from formation.services.formation import session_form_memories
from reflections.models import ConsolidatedMemory, ConsolidatedMemoryVersion, MemoryScope, Reflection
from reflections.services.consolidation import ScopeKey, scope_consolidate

TEST_SET = json.loads((Path(__file__).parent.parent / "fixtures" / "sensitive" / "conversations.json").read_text())
SECRETS, BENIGN = TEST_SET["secrets"], TEST_SET["benign"]


def _session(agent: Agent, case: dict) -> Session:
    return session_append_messages(
        agent=agent,
        user_external_id="user-" + case["id"],
        session_external_id=case["id"],
        messages=[MessageInput(role="user", content=text) for text in case["messages"]],
    ).session


def _stored_texts(agent: Agent) -> str:
    return "\n".join(
        [
            *Fact.objects.filter(agent=agent).values_list("content", flat=True),
            *Reflection.objects.filter(agent=agent).values_list("content", flat=True),
            *ConsolidatedMemory.objects.filter(agent=agent).values_list("content", flat=True),
            *ConsolidatedMemoryVersion.objects.filter(memory__agent=agent).values_list("content", flat=True),
        ]
    )


def _consolidate_session(session: Session):
    key = ScopeKey(agent_id=session.agent_id, scope=MemoryScope.SESSION, user_id=session.user_id, session_id=session.pk)
    return scope_consolidate(key=key, force=True)


def _echo(request, *, prefix: str = "The user said: ") -> dict:
    """A model that ignores its prompt: every user message comes back as a fact."""
    return {
        "facts": [
            {"content": prefix + message["text"].replace("\n", " "), "scope": ["user"], "source": [message["number"]]}
            for message in request.inputs["messages"]
            if message["role"] == "user"
        ]
    }


def _echo_reflections(request) -> dict:
    return {"agent": [], "user": [message["text"] for message in request.inputs["messages"]], "session": []}


def _echo_consolidation(request) -> dict:
    lines = [message["text"] for message in request.inputs.get("messages", [])]
    return {"content": "\n".join(["The user is friendly.", *lines, "They like short answers."])}


@pytest.mark.django_db
def test_offline_formation_stores_no_secret_of_the_test_set(agent):
    for case in SECRETS:
        session = _session(agent, case)
        outcome = session_form_memories(session_id=session.pk, trigger="explicit")
        assert outcome.job.status == "succeeded"
        _consolidate_session(session)

    stored = _stored_texts(agent)
    assert stored, "formation stored nothing at all: the test proves nothing"
    leaked = [case["id"] for case in SECRETS if case["secret"] in stored]
    assert leaked == []
    # The case: the offline extractor turned it into a fact, which is withheld and counted.
    assert sensitive_data_counts(agent_id=agent.pk)[(SensitiveKind.GOVERNMENT_ID, "withheld")] >= 1


@pytest.mark.django_db
@pytest.mark.parametrize("policy", [SensitiveDataPolicy.WITHHOLD, SensitiveDataPolicy.REDACT])
def test_a_model_that_ignores_its_prompt_still_stores_no_secret(agent, scripted_llm, policy):
    agent.sensitive_data = policy
    agent.save()
    scripted_llm.script("extract_facts", *[_echo] * len(SECRETS))
    scripted_llm.script("reflect", *[_echo_reflections] * len(SECRETS))
    scripted_llm.script("consolidate", *[_echo_consolidation] * len(SECRETS))

    for case in SECRETS:
        session = _session(agent, case)
        assert session_form_memories(session_id=session.pk, trigger="explicit").job.status == "succeeded"
        assert _consolidate_session(session).status == "succeeded"

    stored = _stored_texts(agent)
    assert [case["id"] for case in SECRETS if case["secret"] in stored] == []
    counts = sensitive_data_counts(agent_id=agent.pk)
    action = "withheld" if policy == SensitiveDataPolicy.WITHHOLD else "redacted"
    for kind in SensitiveKind.values:
        assert counts[(kind, action)] >= 3 * sum(case["kind"] == kind for case in SECRETS), kind  # fact, note, blob
    blobs = ConsolidatedMemory.objects.filter(agent=agent)
    assert all("They like short answers." in blob.content for blob in blobs)  # the rest of a blob is kept
    if policy == SensitiveDataPolicy.REDACT:
        passport = Fact.objects.get(agent=agent, content__contains="passport")
        assert passport.content == "The user said: My passport number is [redacted government id]."
    else:
        assert not Fact.objects.filter(agent=agent).exists()


@pytest.mark.django_db
def test_benign_look_alikes_are_stored(agent, scripted_llm):
    scripted_llm.script("extract_facts", *[_echo] * len(BENIGN))

    for case in BENIGN:
        session_form_memories(session_id=_session(agent, case).pk, trigger="explicit")

    stored = "\n".join(Fact.objects.filter(agent=agent).values_list("content", flat=True))
    assert [case["id"] for case in BENIGN if case["keep"] not in stored] == []
    assert not SensitiveDataFinding.objects.exists()


@pytest.mark.django_db
def test_findings_of_a_failed_formation_are_not_counted_and_its_retry_counts_once(agent, scripted_llm):
    session = _session(agent, next(case for case in SECRETS if case["id"] == "passport-issue-17"))
    scripted_llm.script("extract_facts", _echo, _echo)
    scripted_llm.script("reflect", "not json", "still not json")

    with pytest.raises(MalformedLLMOutput):
        session_form_memories(session_id=session.pk, trigger="explicit")
    assert SensitiveDataFinding.objects.count() == 1  # recorded when found...
    assert sensitive_data_counts(agent_id=agent.pk) == {}  # ...counted only once its job succeeds

    assert session_form_memories(session_id=session.pk, trigger="explicit").job.status == "succeeded"
    assert sensitive_data_counts(agent_id=agent.pk) == {(SensitiveKind.GOVERNMENT_ID, "withheld"): 1}


@pytest.mark.django_db
def test_the_prompts_tell_the_model_to_leave_secrets_out(agent, scripted_llm):
    scripted_llm.script("consolidate", {"content": "The user asked about wifi."})
    session = _session(agent, SECRETS[0])
    session_form_memories(session_id=session.pk, trigger="explicit")
    _consolidate_session(session)

    for purpose in ("extract_facts", "reflect", "consolidate"):
        system = scripted_llm.calls(purpose)[0].messages[0]["content"]
        assert "password" in system and "one-time" in system, purpose


# --- the multilingual corpus (tests/fixtures/sensitive/corpus.jsonl) -------------------------------------------------

CORPUS = [
    json.loads(line)
    for line in (Path(__file__).parent.parent / "fixtures" / "sensitive" / "corpus.jsonl").read_text().splitlines()
]
LANGUAGES = sorted({line["lang"] for line in CORPUS})


def _corpus_session(agent: Agent, *, language: str, label: str) -> Session:
    lines = [line for line in CORPUS if line["lang"] == language and line["label"] == label]
    return session_append_messages(
        agent=agent,
        user_external_id=f"{language}-{label}",
        session_external_id=f"{language}-{label}",
        messages=[MessageInput(role="user", content=line["text"]) for line in lines],
    ).session


def _formed(session: Session, *, consolidated: bool = True) -> None:
    while True:
        outcome = session_form_memories(session_id=session.pk, trigger="explicit")
        assert outcome.job.status == "succeeded"
        if not outcome.more_pending:
            break
    if consolidated:
        assert _consolidate_session(session).status == "succeeded"


def _values(language: str) -> list[str]:
    return [
        value for line in CORPUS if line["lang"] == language and line["label"] == "secret" for value in line["values"]
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_offline_extractor_stores_no_secret_said_in_any_language(agent, language):
    _formed(_corpus_session(agent, language=language, label="secret"))

    stored = _stored_texts(agent)
    assert [value for value in _values(language) if value in stored] == []


@pytest.mark.django_db
@pytest.mark.parametrize("policy", [SensitiveDataPolicy.WITHHOLD, SensitiveDataPolicy.REDACT])
def test_no_model_reads_a_secret_and_one_that_echoes_everything_stores_none(agent, scripted_llm, policy):
    agent.sensitive_data = policy
    agent.save()
    for purpose, echo in (
        ("extract_facts", _echo),
        ("reflect", _echo_reflections),
        ("consolidate", _echo_consolidation),
    ):
        scripted_llm.script(purpose, *[echo] * 4 * len(LANGUAGES))
    scripted_llm.script("reconcile_facts", *[{"decisions": []}] * 4 * len(LANGUAGES))

    # Redaction stores every statement (and embeds it): two languages show it; withholding is run on all of them.
    languages = LANGUAGES if policy == SensitiveDataPolicy.WITHHOLD else ["de", "pt"]
    for language in languages:
        _formed(_corpus_session(agent, language=language, label="secret"))

    values = [value for language in languages for value in _values(language)]
    read = "\n".join(
        json.dumps([request.messages, request.inputs], ensure_ascii=False) for request in scripted_llm.requests
    )
    assert [value for value in values if value in read] == []  # the conversations the models read: labels instead
    stored = _stored_texts(agent)
    assert [value for value in values if value in stored] == []
    counts = sensitive_data_counts(agent_id=agent.pk)
    action = "withheld" if policy == SensitiveDataPolicy.WITHHOLD else "redacted"
    for kind in {SensitiveKind.PASSWORD, SensitiveKind.CARD_SECURITY_CODE, SensitiveKind.SECURITY_ANSWER,
                 SensitiveKind.ONE_TIME_CODE, SensitiveKind.ACCOUNT_LOGIN}:  # fmt: skip
        assert counts[(kind, action)] >= 3, kind  # in a fact, a reflection and a blob of each session
    if policy == SensitiveDataPolicy.REDACT:
        assert Fact.objects.filter(agent=agent, content__contains="[redacted password or PIN]").exists()


@pytest.mark.django_db
def test_benign_look_alikes_of_every_language_are_stored_as_said(agent, scripted_llm):
    scripted_llm.script("extract_facts", *[_echo] * 4 * len(LANGUAGES))
    scripted_llm.script("reconcile_facts", *[{"decisions": []}] * 4 * len(LANGUAGES))

    for language in LANGUAGES:
        _formed(_corpus_session(agent, language=language, label="benign"), consolidated=False)

    stored = set(Fact.objects.filter(agent=agent).values_list("content", flat=True))
    said = [line["text"] for line in CORPUS if line["label"] == "benign" and not line["text"].endswith("?")]
    assert [text for text in said if f"The user said: {text}" not in stored] == []
    assert not SensitiveDataFinding.objects.exists()
