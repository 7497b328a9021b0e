"""Should fact search use feedback? Measured on the LoCoMo dev split: whether facts users found useful before rank the
gold facts of later questions higher when search boosts them.

    .venv/bin/python -m benchmarks.feedback_ranking [--split dev]

On a throwaway stack the split's conversations are imported (observations as facts, as benchmarks.locomo_retrieval
does) and every question is asked through the HTTP API (`POST /api/v1/memory/search`, hybrid, top 50). Per conversation
the questions alternate between "past" and "future". Feedback is what a user would give on the past questions: every
fact in the top 10 that holds the question's evidence is marked useful once (a fact that did not answer gets nothing:
not answering is not being wrong). The future questions are then ranked again with each candidate's score multiplied
by 1 + beta * log2(1 + its useful count), for several betas (0: search as it is), and recall@5/10/25 compared. Also
reported: how many future questions have a gold fact among the facts marked useful (what a boost could gain at most).
Negative feedback is not measured here: the dataset holds no false facts, and a demotion by one user's report would
move agent-wide memory for every user (docs/decisions/0046). Writes benchmarks/results/feedback_ranking.json."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path

from benchmarks.lib.client import MemoryClient
from benchmarks.lib.locomo_data import DEFAULT_LOCOMO, SPLITS, load_conversations, question_recall, recall_table
from benchmarks.lib.stack import RESULTS_DIR, machine, throwaway_stack
from benchmarks.locomo_retrieval import import_split

BETAS = (0.0, 0.1, 0.25, 0.5, 1.0)
FEEDBACK_TOP = 10
TOP_K = 50


def _hits(client: MemoryClient, *, query: str, user: str) -> list[dict]:
    return client.search(query=query, user=user, top_k=TOP_K, mode="hybrid")["results"]


def _sources(hit: dict) -> tuple[str, ...]:
    return tuple(hit["fact"]["metadata"].get("dia_ids") or ())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    parser.add_argument("--split", choices=sorted(SPLITS), default="dev")
    args = parser.parse_args()
    sample_ids = list(SPLITS[args.split])
    conversations = load_conversations(args.locomo, sample_ids=sample_ids)
    info = machine()
    asked: dict[str, list] = {"past": [], "future": []}
    with throwaway_stack() as stack:
        agents = import_split(stack, locomo=args.locomo, sample_ids=sample_ids)
        base_url = stack.start_web()
        for conversation in conversations:
            agent = agents[conversation.sample_id]
            client = MemoryClient(base_url, agent["key"], timeout=300)
            for index, question in enumerate(conversation.questions):
                half = "past" if index % 2 == 0 else "future"
                asked[half].append(
                    (conversation.sample_id, question, _hits(client, query=question.text, user=agent["owner"]))
                )

    useful: Counter[int] = Counter()
    for _, question, hits in asked["past"]:
        for hit in hits[:FEEDBACK_TOP]:
            if question.evidence & set(_sources(hit)):
                useful[hit["fact"]["id"]] += 1
    reachable = sum(
        1 for _, question, hits in asked["future"] if any(
            useful[hit["fact"]["id"]] and question.evidence & set(_sources(hit)) for hit in hits
        )
    )  # fmt: skip
    tables, moved = {}, {}
    baseline = [(question, [_sources(hit) for hit in hits]) for _, question, hits in asked["future"]]
    for beta in BETAS:
        ranked = []
        for _, question, hits in asked["future"]:
            boosted = sorted(
                hits, key=lambda hit: -hit["score"] * (1 + beta * math.log2(1 + useful[hit["fact"]["id"]]))
            )
            ranked.append((question, [_sources(hit) for hit in boosted]))
        tables[str(beta)] = recall_table(ranked)
        # Questions whose recall@5 / @10 rose or fell against search as it is: what the averages are made of.
        moved[str(beta)] = {
            f"@{k}": {
                "up": sum(
                    question_recall(q, new, k) > question_recall(q, old, k)
                    for (q, new), (_, old) in zip(ranked, baseline, strict=True)
                ),
                "down": sum(
                    question_recall(q, new, k) < question_recall(q, old, k)
                    for (q, new), (_, old) in zip(ranked, baseline, strict=True)
                ),
            }
            for k in (5, 10)
        }
    result = {
        "benchmark": "feedback_ranking",
        "split": args.split,
        "conversations": sample_ids,
        "questions": {"past": len(asked["past"]), "future": len(asked["future"])},
        "facts_marked_useful": len(useful),
        "useful_marks": sum(useful.values()),
        "future_questions_with_a_gold_fact_marked_useful": reachable,
        "recall_by_beta": tables,
        "questions_moved_by_beta": moved,
        "machine": info,
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "feedback_ranking.json").write_text(json.dumps(result, indent=1))
    print(f"{len(asked['past'])} past questions gave {sum(useful.values())} useful marks on {len(useful)} facts")
    print(f"{reachable} of {len(asked['future'])} future questions have a gold fact among them")
    print("beta   recall@5  recall@10  recall@25  questions up/down @5, @10 (future questions, overall)")
    for beta, table in tables.items():
        overall, shift = table["overall"], moved[beta]
        print(
            f"{beta:>5}  {overall[5]:8.2f}  {overall[10]:9.2f}  {overall[25]:9.2f}  "
            f"{shift['@5']['up']}/{shift['@5']['down']}, {shift['@10']['up']}/{shift['@10']['down']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
