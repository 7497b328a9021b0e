"""LoCoMo question answering judged by an LLM: the J score mem0, Zep and Memobase publish, for anyone with a model.

    QA_LLM_BASE_URL=https://api.openai.com/v1 QA_LLM_API_KEY=sk-... \\
        .venv/bin/python -m benchmarks.locomo_qa --split eval --context bundle
    .venv/bin/python -m benchmarks.locomo_qa --split dev --quick     # one conversation, the first 20 questions

Any OpenAI-compatible endpoint answers and judges (QA_LLM_BASE_URL, QA_LLM_API_KEY; QA_ANSWER_MODEL and
QA_JUDGE_MODEL, both gpt-4o-mini by default, the model of mem0's published runs). On a throwaway stack
(benchmarks/lib/stack.py) each conversation is imported as its own agent (`import_memories --format locomo`: turns as
messages with their dates, observations as facts), exactly as benchmarks/locomo_retrieval.py does. Then, per
question, through the public HTTP API with the Python client:

1. memory: `--context bundle` asks for the memory bundle (`POST /api/v1/memory/bundle`, the question as the query,
   `--token-budget` tokens: the context block, facts and similar turns, as an agent would put them in its prompt);
   `--context search` joins the top `--top-k` facts and the top `--top-k` turns of the hybrid searches, with dates.
2. answer: the answer model gets the memory and the question (ANSWER_PROMPT) and answers in a few words.
3. judge: the judge model labels the answer CORRECT or WRONG against the gold answer (JUDGE_PROMPT), replying
   {"label": ...}. J is the share labelled CORRECT, per category and overall.

The protocol follows mem0's published evaluation (mem0ai/mem0, evaluation/: the answer prompt asks for a short
answer from timestamped memories; the judge is generous on wording and on date formats, and answers CORRECT/WRONG
in JSON; category 5, adversarial, is left out), with these differences, stated because they move the figure: the
prompts are ours, written to the same criteria, not copied; the memory comes from this service (the dataset's own
observations and turns, not memory an LLM formed: benchmarks/locomo_end_to_end.py measures formation); questions
whose evidence ids are all unusable are skipped, as in the retrieval benchmark (4 in the whole file); one judgement
per question (mem0 reports the mean of several judge runs). Temperature 0 for both models.
Writes benchmarks/results/locomo_qa_<split>[_quick].json with every answer and label, so a figure can be audited."""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from benchmarks.lib.client import MemoryClient
from benchmarks.lib.locomo_data import DEFAULT_LOCOMO, SPLITS, Conversation, Question, load_conversations
from benchmarks.lib.stack import RESULTS_DIR, machine, percentile

LEFT_OUT_CATEGORIES = frozenset({"adversarial"})  # as mem0's protocol: their gold answers say "not mentioned"
QUICK_QUESTIONS = 20
DEFAULT_MODEL = "gpt-4o-mini"

ANSWER_PROMPT = """You answer a question about a long conversation between two people, using only the memories below.
Each memory may carry the date it was said or formed; relative times in a memory ("last year", "next month") are
relative to that date: turn them into the actual date, month or year. If memories disagree, prefer the most recent.
Answer in at most six words, with no explanation. If the memories do not hold the answer, give your best guess.

Memories:
{memory}

Question: {question}
Answer:"""

JUDGE_PROMPT = """Label a generated answer to a question as CORRECT or WRONG, given the gold answer.
The question asks about something said in two people's earlier conversations. The gold answer is short; the
generated answer may be longer or worded differently. Be generous: it is CORRECT when it refers to the same thing as
the gold answer. For a time, it is CORRECT when it means the same date, month, year or period, whatever the format
("May 7th" and "7 May" are the same) or when it is relative but points to that same time. It is WRONG when it names
something else, misses the point, or says it does not know.

Question: {question}
Gold answer: {gold}
Generated answer: {generated}

Give one short sentence of reasoning, then reply with JSON only: {{"label": "CORRECT"}} or {{"label": "WRONG"}}."""

_LABEL = re.compile(r'"label"\s*:\s*"(CORRECT|WRONG)"', re.IGNORECASE)
_BARE_LABEL = re.compile(r"\b(CORRECT|WRONG)\b")


@dataclass(frozen=True)
class QASettings:
    context: str = "bundle"  # bundle or search
    token_budget: int = 2000
    top_k: int = 10
    answer_model: str = DEFAULT_MODEL
    judge_model: str = DEFAULT_MODEL


@dataclass(frozen=True)
class Judged:
    sample_id: str
    category: str
    question: str
    gold: str
    answer: str
    label: str  # CORRECT, WRONG, or UNREADABLE: the judge's reply named neither (counted as WRONG)
    memory_tokens: int
    memory_seconds: float


def judge_label(reply: str) -> str:
    """The judge's label: from its JSON, else the one bare label its reply names; UNREADABLE when it names none or
    both (mem0's script would fail on those; here they count as WRONG and are reported)."""
    if match := _LABEL.search(reply):
        return match[1].upper()
    found = {label.upper() for label in _BARE_LABEL.findall(reply)}
    return found.pop() if len(found) == 1 else "UNREADABLE"


def memory_text(client: MemoryClient, *, question: str, user: str, settings: QASettings) -> str:
    """What the answer model reads: the bundle's text, or the searches' hits with their dates."""
    if settings.context == "bundle":
        return client.bundle(query=question, user=user, token_budget=settings.token_budget)["text"]
    facts = client.search(query=question, user=user, top_k=settings.top_k)["results"]
    turns = client.messages_search(query=question, user=user, top_k=settings.top_k)["results"]
    lines = [_dated(hit["fact"]["valid_from"], hit["fact"]["content"]) for hit in facts]
    for hit in turns:
        message = hit["message"]
        speaker = message["metadata"].get("speaker") or message["role"]
        lines.append(_dated(message["created_at"], f"{speaker}: {message['content']}"))
    return "\n".join(f"- {line}" for line in lines)


def _dated(when: str | None, text: str) -> str:
    return f"({when[:10]}) {text}" if when else text


def chat(llm, *, model: str, prompt: str) -> str:
    reply = llm.chat.completions.create(
        model=model, messages=[{"role": "user", "content": prompt}], temperature=0, max_tokens=300
    )
    return (reply.choices[0].message.content or "").strip()


def answer_and_judge(
    *,
    questions: Sequence[tuple[Question, str, str]],
    base_url: str,
    llm,
    settings: QASettings,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
) -> list[Judged]:
    """Each (question, the agent's API key, the user whose memory answers) through memory, answer and judgement."""

    def one(item: tuple[Question, str, str]) -> Judged:
        question, key, user = item
        started = time.perf_counter()
        client = MemoryClient(base_url, key, timeout=300)
        memory = memory_text(client, question=question.text, user=user, settings=settings)
        memory_seconds = time.perf_counter() - started
        prompt = ANSWER_PROMPT.format(memory=memory, question=question.text)
        answer = chat(llm, model=settings.answer_model, prompt=prompt)
        verdict = chat(
            llm,
            model=settings.judge_model,
            prompt=JUDGE_PROMPT.format(question=question.text, gold=question.answer, generated=answer),
        )
        return Judged(
            sample_id=question.sample_id,
            category=question.category,
            question=question.text,
            gold=question.answer,
            answer=answer,
            label=judge_label(verdict),
            memory_tokens=len(memory) // 4,
            memory_seconds=round(memory_seconds, 4),
        )

    results = []
    with ThreadPoolExecutor(workers) as pool:
        for done, judged in enumerate(pool.map(one, questions), start=1):
            results.append(judged)
            if progress:
                progress(done)
    return results


def j_scores(results: Sequence[Judged]) -> dict:
    """J (% labelled CORRECT) overall and per category, with the counts behind each."""
    correct: dict[str, int] = defaultdict(int)
    asked: dict[str, int] = defaultdict(int)
    for judged in results:
        for group in ("overall", judged.category):
            asked[group] += 1
            correct[group] += judged.label == "CORRECT"
    return {
        group: {"J": round(100.0 * correct[group] / asked[group], 2), "questions": asked[group]} for group in asked
    } | {"unreadable_judgements": sum(judged.label == "UNREADABLE" for judged in results)}


def questions_of(conversations: Sequence[Conversation], agents: dict[str, dict], *, limit: int | None) -> list:
    chosen = [
        (question, agents[conversation.sample_id]["key"], agents[conversation.sample_id]["owner"])
        for conversation in conversations
        for question in conversation.questions
        if question.category not in LEFT_OUT_CATEGORIES
    ]
    return chosen[:limit] if limit else chosen


def qa_llm():
    from openai import OpenAI

    base_url = os.environ.get("QA_LLM_BASE_URL")
    if not base_url:
        raise SystemExit("set QA_LLM_BASE_URL (an OpenAI-compatible endpoint) and QA_LLM_API_KEY")
    return OpenAI(base_url=base_url, api_key=os.environ.get("QA_LLM_API_KEY") or "unused", timeout=120, max_retries=5)


def print_scores(split: str, settings: QASettings, scores: dict) -> None:
    print(f"\nLoCoMo {split}: J (% CORRECT), context {settings.context}, answer {settings.answer_model}, judge "
          f"{settings.judge_model}")  # fmt: skip
    for group in ("overall", "single-hop", "multi-hop", "temporal", "open-domain"):
        if group in scores:
            print(f"  {group:12} {scores[group]['J']:6.2f}  ({scores[group]['questions']} questions)")
    print(f"  unreadable judgements (counted WRONG): {scores['unreadable_judgements']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    parser.add_argument("--split", choices=sorted(SPLITS), default="dev")
    parser.add_argument("--context", choices=("bundle", "search"), default="bundle")
    parser.add_argument("--token-budget", type=int, default=2000, help="the bundle's budget (--context bundle)")
    parser.add_argument("--top-k", type=int, default=10, help="facts and turns each (--context search)")
    parser.add_argument("--workers", type=int, default=4, help="questions in flight at once")
    parser.add_argument("--quick", action="store_true", help=f"one conversation, its first {QUICK_QUESTIONS} questions")
    parser.add_argument("--output", help="results file name (default: locomo_qa_<split>[_quick].json)")
    args = parser.parse_args()
    settings = QASettings(
        context=args.context,
        token_budget=args.token_budget,
        top_k=args.top_k,
        answer_model=os.environ.get("QA_ANSWER_MODEL", DEFAULT_MODEL),
        judge_model=os.environ.get("QA_JUDGE_MODEL", DEFAULT_MODEL),
    )
    llm = qa_llm()
    sample_ids = list(SPLITS[args.split])[: 1 if args.quick else None]
    conversations = load_conversations(args.locomo, sample_ids=sample_ids)
    info = machine()
    # Imported here: the stack and the import are the retrieval benchmark's, and start PostgreSQL when used.
    from benchmarks.lib.stack import throwaway_stack
    from benchmarks.locomo_retrieval import embed_messages, import_split

    with throwaway_stack() as stack:
        agents = import_split(stack, locomo=args.locomo, sample_ids=sample_ids)
        base_url = stack.start_web()
        embed_messages(stack)
        questions = questions_of(conversations, agents, limit=QUICK_QUESTIONS if args.quick else None)
        started = time.monotonic()
        results = answer_and_judge(
            questions=questions,
            base_url=base_url,
            llm=llm,
            settings=settings,
            workers=args.workers,
            progress=lambda done: print(f"\r{done}/{len(questions)}", end="", flush=True),
        )
        seconds = time.monotonic() - started
    scores = j_scores(results)
    print_scores(args.split, settings, scores)
    memory_seconds = [judged.memory_seconds for judged in results]
    result = {
        "benchmark": "locomo_qa",
        "split": args.split,
        "conversations": sample_ids,
        "quick": args.quick,
        "settings": asdict(settings),
        "llm_base_url": os.environ.get("QA_LLM_BASE_URL"),
        "machine": info,
        "scores": scores,
        "memory_latency_ms": {
            "p50": round(1000 * statistics.median(memory_seconds), 2),
            "p95": round(1000 * percentile(memory_seconds, 95), 2),
        },
        "seconds": round(seconds, 1),
        "answers": [asdict(judged) for judged in results],
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    name = args.output or f"locomo_qa_{args.split}{'_quick' if args.quick else ''}.json"
    (RESULTS_DIR / name).write_text(json.dumps(result, indent=1))
    print(f"wrote {RESULTS_DIR / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
