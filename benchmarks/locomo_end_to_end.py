"""LoCoMo end to end: the memory the service forms by itself from the raw conversations, and how well fact search
then finds each question's evidence.

    .venv/bin/python -m benchmarks.locomo_end_to_end --split all                          # offline extractor
    LLM_PROVIDER=local .venv/bin/python -m benchmarks.locomo_end_to_end --split dev --sessions 4   # local model

On a throwaway stack (benchmarks/lib/stack.py; with LLM_PROVIDER=local, the llama.cpp server `make run` would start):
per conversation an agent and an API key; its sessions in date order, each posted through the HTTP API as the agent
would (every turn a user message "<speaker>: <text>" at its session's date, with its dia_id in the metadata; the
sessions belong to speaker_a, as in benchmarks/locomo_retrieval.py), preceded by the memory block the agent would
have put in its prompt (GET /memory/context, as a system message inside <MemoryContext>); then formation is asked
for (POST /sessions/<id>/form) and the deployment's workers form it, session after session. Then every question
goes through fact search (hybrid, top 50) and recall@k is the share of its evidence dia_ids among the source
messages of the facts returned (benchmarks/lib/locomo_data.py). Also: facts formed, their length, duplicates, the junk
audit (benchmarks/fact_audit.py), LLM calls, tokens and wall time per session, and each step's reply validity
(formation.selectors.llm_validity.llm_reply_validity). `--sessions N` forms only each conversation's first N sessions
(and asks only the questions whose evidence lies in them), for the slow local model.
Writes benchmarks/results/locomo_end_to_end_<provider>_<split>.json, and the facts formed with their source turns to
.data/benchmarks/ (LoCoMo's text: never into the repository), which benchmarks/fact_audit.py reads."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchmarks.fact_audit import AuditedFact, facts_audit, print_audit
from benchmarks.lib.client import MemoryClient
from benchmarks.lib.locomo_data import (
    DEFAULT_LOCOMO,
    KS,
    SPLITS,
    Conversation,
    Question,
    load_conversations,
    recall_table,
)
from benchmarks.lib.stack import RESULTS_DIR, machine, throwaway_stack
from devstack.local_llm import local_llm, shipped_model_path
from portability.formats.locomo import DATE_FORMAT

REPO_DIR = Path(__file__).resolve().parent.parent

AGENT_PREFIX = "e2e"
# The facts formed, with their source turns: LoCoMo text (CC BY-NC), so kept out of the repository, under .data/.
FACTS_DIR = REPO_DIR / ".data" / "benchmarks"
FORMATION_TIMEOUT = 3600  # one session on the local model takes minutes on two shared cores


def _session_start(date: str) -> datetime:
    return datetime.strptime(date.strip(), DATE_FORMAT).replace(tzinfo=UTC)


def _sessions(conversation: Conversation, *, limit: int | None) -> list[tuple[int, list]]:
    numbers = sorted({turn.session for turn in conversation.turns})[:limit]
    return [(number, [turn for turn in conversation.turns if turn.session == number]) for number in numbers]


def _wait_formed(*, session_external_id: str, agent_external_id: str, through: int) -> None:
    from conversations.models import Session
    from core.models import JobStatus
    from formation.models import FormationJob

    deadline = time.monotonic() + FORMATION_TIMEOUT
    while time.monotonic() < deadline:
        session = Session.objects.get(agent__external_id=agent_external_id, external_id=session_external_id)
        if session.formation_status == Session.FormationStatus.FAILED:  # a failed job the task retries is no end
            failed = FormationJob.objects.filter(session=session, status=JobStatus.FAILED).latest("id")
            raise RuntimeError(f"formation of {session_external_id} failed: {failed.error}")
        if session.formed_through_message_id == through and session.formation_status == Session.FormationStatus.IDLE:
            return
        time.sleep(0.5)
    raise TimeoutError(f"formation of {session_external_id} did not finish")


def _consolidations_settled(timeout: float) -> None:
    """Consolidations queued by the last formations finish before the figures are read."""
    from core.models import JobStatus
    from reflections.models import ConsolidationJob

    deadline = time.monotonic() + timeout
    while ConsolidationJob.objects.filter(status=JobStatus.RUNNING).exists() and time.monotonic() < deadline:
        time.sleep(1)


def form_conversation(stack, conversation: Conversation, *, owner: str, sessions: int | None) -> dict:
    """Posts the conversation's sessions one by one and has each formed; returns what the run needs later."""
    agent = f"{AGENT_PREFIX}-{conversation.sample_id}"
    client = MemoryClient(stack.base_url, stack.api_key(agent), timeout=600)
    injected: dict[str, str] = {}
    seconds: list[float] = []
    formed = _sessions(conversation, limit=sessions)
    for number, turns in formed:
        session_id = f"{conversation.sample_id}-s{number}"
        start = _session_start(turns[0].date)
        context = client.context(user=owner, session=session_id)
        messages = []
        if context and context["text"]:  # empty when there is no memory yet
            injected[session_id] = context["text"]
            messages.append(
                {
                    "role": "system",
                    "content": context["text"],
                    "created_at": start.isoformat(),
                    "idempotency_key": f"{session_id}-memory",
                }
            )
        for position, turn in enumerate(turns):
            messages.append(
                {
                    "role": "user",
                    "content": f"{turn.speaker}: {turn.text}",
                    "created_at": (start + timedelta(seconds=30 * (position + 1))).isoformat(),
                    "idempotency_key": turn.dia_id,
                    "metadata": {"dia_id": turn.dia_id, "speaker": turn.speaker},
                }
            )
        started = time.monotonic()
        stored = client.messages_append(session_id, messages, user=owner)["messages"]
        client.session_form(session_id)
        _wait_formed(session_external_id=session_id, agent_external_id=agent, through=stored[-1]["id"])
        seconds.append(time.monotonic() - started)
        print(f"  {session_id}: {len(turns)} turns formed in {seconds[-1]:.1f}s", flush=True)
    return {
        "agent": agent,
        "client": client,
        "owner": owner,
        "injected": injected,
        "seconds": seconds,
        "dia_ids": {turn.dia_id for _, turns in formed for turn in turns},
    }


def fact_sources(agent: str) -> dict[int, tuple[str, ...]]:
    """Every fact version of the agent: the dia_ids of its source messages."""
    from facts.models import Fact

    sources: dict[int, tuple[str, ...]] = {}
    for fact in Fact.objects.filter(agent__external_id=agent).prefetch_related("source_messages"):
        sources[fact.pk] = tuple(
            str(message.metadata["dia_id"]) for message in fact.source_messages.all() if "dia_id" in message.metadata
        )
    return sources


def ask(run: dict, questions: list[Question]) -> list[tuple[Question, list[tuple[str, ...]]]]:
    sources = fact_sources(run["agent"])
    ranked = []
    for question in questions:
        hits = run["client"].search(query=question.text, user=run["owner"], top_k=max(KS), mode="hybrid")["results"]
        ranked.append((question, [sources.get(hit["fact"]["id"], ()) for hit in hits]))
    return ranked


def formed_memory(runs: list[dict]) -> tuple[dict, list[dict]]:
    """Facts (current versions), their length and duplicates, reflections, blobs, LLM calls and tokens."""
    from django.db.models import Count, Sum

    from core.models import LLMCall
    from facts.models import Fact
    from reflections.models import ConsolidatedMemory, Reflection

    agents = [run["agent"] for run in runs]
    current = list(
        Fact.objects.filter(agent__external_id__in=agents, valid_to__isnull=True)
        .select_related("agent", "user", "source_session")
        .prefetch_related("source_messages")
        .order_by("id")
    )
    words = [len(fact.content.split()) for fact in current]
    normalised = [(fact.agent_id, fact.user_id, " ".join(fact.content.lower().split()).rstrip(".")) for fact in current]
    calls = LLMCall.objects.filter(agent__external_id__in=agents)
    totals = calls.aggregate(
        calls=Count("id"), prompt_tokens=Sum("prompt_tokens"), completion_tokens=Sum("completion_tokens")
    )
    sessions = sum(len(run["seconds"]) for run in runs)
    dump = [
        {
            "content": fact.content,
            "owner": f"{fact.agent.external_id}/{fact.user.external_id if fact.user else '(agent)'}",
            "session": fact.source_session.external_id if fact.source_session else "",
            "scopes": fact.scopes,
            "source_text": "\n".join(message.content for message in fact.source_messages.all()),
        }
        for fact in current
    ]
    return {
        "sessions": sessions,
        "facts_current": len(current),
        "fact_versions": Fact.objects.filter(agent__external_id__in=agents).count(),
        "facts_per_session": round(len(current) / sessions, 2) if sessions else 0,
        "fact_words_mean": round(statistics.mean(words), 1) if words else 0,
        "fact_words_max": max(words, default=0),
        "exact_duplicates": len(normalised) - len(set(normalised)),
        "reflections": Reflection.objects.filter(agent__external_id__in=agents).count(),
        "consolidated_blobs": ConsolidatedMemory.objects.filter(agent__external_id__in=agents).count(),
        "llm_calls": totals["calls"],
        "llm_calls_per_session": round(totals["calls"] / sessions, 2) if sessions else 0,
        "tokens_per_session": round(((totals["prompt_tokens"] or 0) + (totals["completion_tokens"] or 0)) / sessions)
        if sessions
        else 0,
        "seconds_per_session_mean": round(statistics.mean(s for run in runs for s in run["seconds"]), 2),
        "seconds_per_session_max": round(max(s for run in runs for s in run["seconds"]), 2),
    }, dump


def reply_validity(since: datetime) -> list[dict]:
    from formation.selectors.llm_validity import llm_reply_validity

    return [
        {
            "step": step.step,
            "replies": step.replies,
            "valid_percent": round(step.valid_percent, 1),
            "violating_percent": round(step.violating_percent, 1),
            "violations": step.violations,
        }
        for step in llm_reply_validity(since=since)
    ]


def retrieval_only_figures(split: str) -> dict:
    """recall@k of the same questions over the turns and over LoCoMo's observations, from the last run of
    benchmarks/locomo_retrieval.py on the split (hybrid mode), when there is one."""
    figures = {}
    for name in ("dev", "eval") if split == "all" else (split,):
        path = RESULTS_DIR / f"locomo_{name}.json"
        if path.exists():
            recall = json.loads(path.read_text())["recall"]
            figures[name] = {corpus: recall[f"{corpus}/hybrid"]["overall"] for corpus in ("turns", "observations")}
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=sorted(SPLITS), default="dev")
    parser.add_argument("--sessions", type=int, help="form only the first N sessions of each conversation")
    parser.add_argument("--output", help="results file name (default: locomo_end_to_end_<provider>_<split>.json)")
    args = parser.parse_args()
    provider = "local" if os.environ.get("LLM_PROVIDER") == "local" else os.environ.get("LLM_PROVIDER", "offline")
    sample_ids = list(SPLITS[args.split])
    conversations = load_conversations(DEFAULT_LOCOMO, sample_ids=sample_ids)
    owners = {
        sample["sample_id"]: sample["conversation"]["speaker_a"]
        for sample in json.loads(DEFAULT_LOCOMO.read_text(encoding="utf-8"))
    }
    info = machine()
    started_at = datetime.now(UTC)
    wall_started = time.monotonic()
    (REPO_DIR / ".data").mkdir(exist_ok=True)
    with local_llm(data_dir=REPO_DIR / ".data") as llm_env, throwaway_stack(extra_env=llm_env) as stack:
        os.environ.update(stack.env)
        import django

        django.setup()
        stack.start_web()
        stack.start_deployment_workers()
        runs = []
        for conversation in conversations:
            print(f"{conversation.sample_id}: forming", flush=True)
            runs.append(
                form_conversation(stack, conversation, owner=owners[conversation.sample_id], sessions=args.sessions)
            )
        _consolidations_settled(timeout=600)
        formation_seconds = time.monotonic() - wall_started
        ranked = []
        asked = skipped = 0
        for conversation, run in zip(conversations, runs, strict=True):
            questions = [q for q in conversation.questions if q.evidence <= run["dia_ids"]]
            asked += len(questions)
            skipped += len(conversation.questions) - len(questions)
            ranked.extend(ask(run, questions))
        memory, dump = formed_memory(runs)
        validity = reply_validity(started_at)
        injected = {session: text for run in runs for session, text in run["injected"].items()}
        audit = facts_audit(
            [
                AuditedFact(
                    content=item["content"],
                    owner=item["owner"],
                    injected_memory=injected.get(item["session"], ""),
                    source_text=item["source_text"],
                )
                for item in dump
            ]
        )
    recall = recall_table(ranked)
    result = {
        "benchmark": "locomo_end_to_end",
        "provider": provider,
        "model": _model_name(provider),
        "split": args.split,
        "conversations": sample_ids,
        "sessions_per_conversation": args.sessions,
        "questions": asked,
        "questions_skipped_evidence_outside_formed_sessions": skipped,
        "machine": info | {"load_average_at_end": os.getloadavg()[0]},
        "wall_seconds_formation": round(formation_seconds, 1),
        "recall": recall,
        "retrieval_only": retrieval_only_figures(args.split) if args.sessions is None else {},
        "memory": memory,
        "reply_validity": validity,
        # Counts only: examples quote LoCoMo, which must not be copied into the repository (they are printed).
        "junk_audit": {name: value for name, value in audit.items() if name != "examples"},
    }
    print_result(result)
    print_audit(audit, label=f"{provider}, {args.split}")
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    name = args.output or f"locomo_end_to_end_{provider}_{args.split}.json"
    (RESULTS_DIR / name).write_text(json.dumps(result, indent=1))
    FACTS_DIR.mkdir(parents=True, exist_ok=True)
    facts_file = FACTS_DIR / name.replace(".json", "_facts.json")
    facts_file.write_text(json.dumps({"facts": dump, "injected_memory": injected}, indent=1))
    print(f"\nwrote {RESULTS_DIR / name} and the facts formed to {facts_file}")
    return 0


def _model_name(provider: str) -> str:
    if provider == "local":
        return Path(os.environ.get("LOCAL_LLM_MODEL") or shipped_model_path()).name
    return os.environ.get("LLM_FAST_MODEL", "") if provider == "openai" else "offline-rules"


def print_result(result: dict) -> None:
    overall = result["recall"].get("overall", {})
    print(f"\nLoCoMo end to end, {result['provider']}, {result['split']}: {result['questions']} questions")
    print("recall@k (%) " + " ".join(f"@{k}: {overall.get(k, float('nan')):.1f}" for k in KS))
    for split, corpora in result["retrieval_only"].items():
        for corpus, figures in corpora.items():
            print(f"  retrieval only, {split}, {corpus} given: " + " ".join(f"@{k}: {figures[str(k)]:.1f}" for k in KS))
    print("memory: " + json.dumps(result["memory"]))
    for step in result["reply_validity"]:
        print(
            f"  {step['step']:18} replies {step['replies']:5}  valid {step['valid_percent']:5.1f}%  "
            f"against a rule {step['violating_percent']:5.1f}%  {step['violations']}"
        )


if __name__ == "__main__":
    sys.exit(main())
