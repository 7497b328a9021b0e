"""The development set for time: does memory tell what is true now from what was true then, and when things happened?

    .venv/bin/python -m benchmarks.time_devset                        # the offline extractor
    .venv/bin/python -m benchmarks.time_devset --provider scripted    # the scripted LLM (a good model's replies)
    .venv/bin/python -m benchmarks.time_devset --conversations c01,c02 --output time_devset_quick.json

On a throwaway stack (benchmarks/lib/stack.py: gunicorn, `make run`'s workers) with one agent and one end user per
conversation of tests/fixtures/time_devset/ (benchmarks/lib/time_devset.py): the conversations' sessions are posted
through the HTTP API with the Python client, each message at its own date (`created_at`), and each is formed
(POST /sessions/<id>/form) before the next session of that conversation is posted: session 1 of every conversation,
then session 2, and so on. Formation runs with the offline extractor (`--provider offline`) or with the scripted LLM
(`--provider scripted`, benchmarks/lib/scripted_llm.py: the extraction a good LLM would return for each session,
written with the set, and its reconciliation decisions). Then every question goes through fact search
(POST /api/v1/memory/search, hybrid, top 10) and turn search (POST /api/v1/messages/search, hybrid, top 5), and:
- current, held-at and before/after: top-1, the first fact hit names what the answer must and nothing it must not
  (the ended value, another period's value);
- when: R@5, an evidence message among the first 5 turns, or a fact among the first 5 that answers the question and
  whose world-time start gives the expected date at its precision (only where the API gives facts a world time);
- held-at again with `holds_at` (the question's moment), when the API gives facts a world time (or `--holds-at`);
per type and overall, with diagnostics (fact top-1 and R@5, turn R@5 for every type). The API's world-time fields are
detected, never required: on an API without them questions are scored by content alone.
Writes benchmarks/results/time_devset_<provider>.json (or --output) with every question's verdict and top hit."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.lib.client import MemoryClient
from benchmarks.lib.stack import RESULTS_DIR, machine, throwaway_stack
from benchmarks.lib.time_devset import (
    DEFAULT_SET,
    TOP_K_WHEN,
    TYPES,
    Conversation,
    FactHit,
    Question,
    Verdict,
    judge,
    load_set,
    scores,
)

AGENT = "time-devset"
FACT_TOP_K = 10
FORMATION_TIMEOUT = 600
SEARCH_THREADS = 4
LABELS = {
    "current": "current truth, top-1",
    "held_at": "held at, top-1",
    "when": "when, R@5",
    "before_after": "before/after, top-1",
    "overall": "overall",
}


def user_of(conversation: Conversation) -> str:
    return f"{conversation.id}-{conversation.user}"


def post_session(client: MemoryClient, conversation: Conversation, number: int) -> tuple[str, int]:
    session = conversation.sessions[number]
    messages = [
        {
            "role": message.role,
            "content": message.content,
            "created_at": message.created_at,
            "idempotency_key": message.id,
            "metadata": {"devset_id": message.id},
        }
        for message in session.messages
    ]
    stored = client.messages_append(session.id, messages, user=user_of(conversation))["messages"]
    client.session_form(session.id)
    return session.id, stored[-1]["id"]


def wait_formed(client: MemoryClient, pending: dict[str, int]) -> None:
    """Until every session named has been formed through its last message (a failed formation stops the run)."""
    deadline = time.monotonic() + FORMATION_TIMEOUT
    waiting = dict(pending)
    while waiting:
        for session, through in list(waiting.items()):
            info = client.session_get(session)
            if info["formation_status"] == "failed":
                raise RuntimeError(f"formation of {session} failed")
            if info["formed_through_message_id"] == through and info["formation_status"] == "idle":
                del waiting[session]
        if waiting and time.monotonic() > deadline:
            raise TimeoutError(f"formation did not finish: {sorted(waiting)}")
        time.sleep(0.5)


def form_all(client: MemoryClient, conversations: list[Conversation]) -> list[float]:
    """Session 1 of every conversation, formed; then session 2; ... Returns each round's seconds."""
    seconds = []
    for number in range(max(len(conversation.sessions) for conversation in conversations)):
        started = time.monotonic()
        pending = dict(
            post_session(client, conversation, number)
            for conversation in conversations
            if number < len(conversation.sessions)
        )
        wait_formed(client, pending)
        seconds.append(time.monotonic() - started)
        print(f"  session {number + 1} of each conversation: {len(pending)} formed in {seconds[-1]:.1f}s", flush=True)
    return seconds


def wait_embedded(timeout: float = 600) -> None:
    """Turn search reads message vectors the workers write: wait until every message has one."""
    from conversations.models import Message, MessageEmbedding

    deadline = time.monotonic() + timeout
    while MessageEmbedding.objects.count() < Message.objects.count():
        if time.monotonic() > deadline:
            raise TimeoutError("message embedding did not finish")
        time.sleep(0.5)


def api_features(client: MemoryClient, conversation: Conversation) -> dict[str, bool]:
    """What the API gives: a world time on fact hits (and then holds_at, which comes with it)."""
    hits = client.search(query=conversation.questions[0].text, user=user_of(conversation), top_k=1)["results"]
    world_time = bool(hits) and "world_time" in hits[0]["fact"]
    return {"world_time": world_time, "holds_at": world_time}


def fact_hits(results: list[dict]) -> list[FactHit]:
    return [FactHit(content=hit["fact"]["content"], world_time=hit["fact"].get("world_time")) for hit in results]


def _hit_brief(hit: dict) -> dict:
    """What a failed question's first hits were, to read why: text, category, why returned, whether it holds now."""
    fact = hit["fact"]
    return {
        "content": fact["content"],
        "category": fact.get("category", ""),
        "reasons": hit.get("reasons", []),
        "score": hit.get("score"),
        "key": fact.get("key", ""),
        "world_time": fact.get("world_time"),
    }


def ask(client: MemoryClient, conversation: Conversation, question: Question, *, holds_at: bool) -> dict:
    user = user_of(conversation)
    facts = client.search(query=question.text, user=user, top_k=FACT_TOP_K, mode="hybrid")["results"]
    turns = client.messages_search(query=question.text, user=user, top_k=TOP_K_WHEN, mode="hybrid")["results"]
    at_facts = None
    if holds_at and question.type == "held_at" and question.at is not None:
        at_facts = client.search(
            query=question.text, user=user, top_k=FACT_TOP_K, mode="hybrid", holds_at=question.at.isoformat()
        )["results"]
    verdict = judge(
        question,
        facts=fact_hits(facts),
        turns=[hit["message"]["metadata"].get("devset_id", "") for hit in turns],
        facts_holds_at=fact_hits(at_facts) if at_facts is not None else None,
    )
    return {
        "verdict": verdict,
        "detail": {
            "question": question.id,
            "type": question.type,
            "text": question.text,
            "correct": verdict.correct,
            "fact_rank": verdict.fact_rank,
            "turn_at_5": verdict.turn_at_5,
            "fact_date_at_5": verdict.fact_date_at_5,
            "holds_at_top1": verdict.holds_at_top1,
            "top_fact": facts[0]["fact"]["content"] if facts else None,
            "top_fact_world_time": facts[0]["fact"].get("world_time") if facts else None,
            "top_fact_holds_at": at_facts[0]["fact"]["content"] if at_facts else None,
            "top_facts": [_hit_brief(hit) for hit in facts[:5]],
            "top_turns": [hit["message"]["metadata"].get("devset_id", "") for hit in turns],
        },
    }


def memory_formed(agent: str) -> dict:
    from django.db.models import Count, Q

    from core.models import LLMCall
    from facts.models import Fact

    facts = Fact.objects.filter(agent__external_id=agent).aggregate(
        versions=Count("id"), current=Count("id", filter=Q(valid_to__isnull=True))
    )
    return {
        "fact_versions": facts["versions"],
        "facts_current": facts["current"],
        "llm_calls": LLMCall.objects.filter(agent__external_id=agent).count(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--provider", choices=("offline", "scripted"), default="offline")
    parser.add_argument(
        "--holds-at",
        action="store_true",
        help="ask the held-at questions with holds_at even when fact hits carry no world time",
    )
    parser.add_argument("--conversations", help="comma-separated conversation ids (default: all)")
    parser.add_argument("--set", type=Path, default=DEFAULT_SET, help="the set's folder")
    parser.add_argument("--output", help="results file name (default: time_devset_<provider>.json)")
    args = parser.parse_args()
    only = [name.strip() for name in (args.conversations or "").split(",") if name.strip()]
    conversations = load_set(args.set, only=only)
    questions = [question for conversation in conversations for question in conversation.questions]
    info = machine()
    started = time.monotonic()
    llm_env = {"LLM_PROVIDER": "offline", "LLM_BASE_URL": "", "LLM_API_KEY": ""}
    scripted = None
    if args.provider == "scripted":
        from benchmarks.lib.scripted_llm import ScriptedLLM

        scripted = ScriptedLLM(conversations=conversations, keep_requests=False)
    with _maybe_running(scripted) as stub, throwaway_stack(extra_env=llm_env) as stack:
        if stub is not None:
            stack.env |= {"LLM_PROVIDER": "openai", "LLM_BASE_URL": stub.base_url, "LLM_API_KEY": "scripted"}
        os.environ.update(stack.env)
        import django

        django.setup()
        stack.start_web()
        stack.start_deployment_workers()
        client = MemoryClient(stack.base_url, stack.api_key(AGENT), timeout=120)
        print(f"{len(conversations)} conversations, {len(questions)} questions; forming ({args.provider})", flush=True)
        rounds = form_all(client, conversations)
        wait_embedded()
        formation_seconds = time.monotonic() - started
        features = api_features(client, conversations[0])
        use_holds_at = features["holds_at"] or args.holds_at
        asked_started = time.monotonic()
        jobs = [(conversation, question) for conversation in conversations for question in conversation.questions]
        with ThreadPoolExecutor(SEARCH_THREADS) as pool:
            answers = list(pool.map(lambda job: ask(client, *job, holds_at=use_holds_at), jobs))
        asking_seconds = time.monotonic() - asked_started
        memory = memory_formed(AGENT)
    verdicts: list[Verdict] = [answer["verdict"] for answer in answers]
    result = {
        "benchmark": "time_devset",
        "provider": args.provider,
        "set": {
            "conversations": len(conversations),
            "sessions": sum(len(conversation.sessions) for conversation in conversations),
            "messages": sum(len(s.messages) for conversation in conversations for s in conversation.sessions),
            "questions": {kind: sum(1 for q in questions if q.type == kind) for kind in TYPES},
        },
        "api": features | {"holds_at_asked": use_holds_at},
        "machine": info | {"load_average_at_end": os.getloadavg()[0]},
        "asked_on": datetime.now(UTC).date().isoformat(),
        "wall_seconds": {
            "formation": round(formation_seconds, 1),
            "formation_rounds": [round(s, 1) for s in rounds],
            "questions": round(asking_seconds, 1),
            "total": round(time.monotonic() - started, 1),
        },
        "memory": memory,
        "scripted_llm": dict(scripted.served) if scripted is not None else None,
        "scores": scores(verdicts),
        "questions": [answer["detail"] for answer in answers],
    }
    print_result(result)
    if scripted is not None and scripted.served["extraction"] != result["set"]["sessions"]:
        # The stub reads the prompt's conversation lines: a change of their format leaves sessions unanswered.
        print(
            f"WARNING: the scripted LLM answered {scripted.served['extraction']} extractions for "
            f"{result['set']['sessions']} sessions ({dict(scripted.served)}): see benchmarks/lib/scripted_llm.py",
            flush=True,
        )
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / (args.output or f"time_devset_{args.provider}.json")
    path.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {path}")
    return 0


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _maybe_running(stub):
    return stub.running() if stub is not None else _Nothing()


def _cell(value: float | None) -> str:
    return "    -" if value is None else f"{value:5.1f}"


def print_result(result: dict) -> None:
    table = result["scores"]
    api = result["api"]
    print(
        f"\nTime development set, {result['provider']}: {table['overall']['questions']} questions over "
        f"{result['set']['conversations']} conversations; API world time: {'yes' if api['world_time'] else 'no'}, "
        f"holds_at asked: {'yes' if api['holds_at_asked'] else 'no'}; load "
        f"{result['machine']['load_average_at_start']:.1f} -> {result['machine']['load_average_at_end']:.1f}"
    )
    print(f"{'':22} {'n':>4} {'score':>6} {'holds_at':>9} {'fact@1':>7} {'fact@5':>7} {'turn@5':>7} {'date@5':>7}")
    for name, label in LABELS.items():
        row = table[name]
        print(
            f"{label:22} {row['questions']:4} {_cell(row['headline']):>6} {_cell(row['holds_at_top1']):>9} "
            f"{_cell(row['fact_top1']):>7} {_cell(row['fact_at_5']):>7} {_cell(row['turn_at_5']):>7} "
            f"{_cell(row['fact_date_at_5']):>7}"
        )
    print(f"memory: {json.dumps(result['memory'])}; wall: {json.dumps(result['wall_seconds'])}")
    if result["scripted_llm"] is not None:
        print(f"scripted LLM: {json.dumps(result['scripted_llm'])}")


if __name__ == "__main__":
    sys.exit(main())
