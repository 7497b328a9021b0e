"""What the entity graph adds to a whole formation run's CPU (issue 27's cost goal: formation CPU per session up by
at most 20%): the LoCoMo sessions of a split formed in this process by the offline provider, through
formation.services.formation.session_form_memories as the formation worker runs it (extraction, the graph's parse,
embedding, reconciliation, the graph's writes, reflections), with and without the graph, alternating.

    .venv/bin/python -m benchmarks.formation_graph_cpu                 # dev split, 3 rounds each way
    .venv/bin/python -m benchmarks.formation_graph_cpu --rounds 5

On a throwaway stack (benchmarks/lib/stack.py: embedded PostgreSQL and Redis, migrated; no worker: formation runs here).
"Without the graph" is this benchmark's switch, not the product's: the offline provider's reply is given no entities
and relations (facts.grammar.graph.graph_of_facts replaced), so neither the parse nor the writes run. Each round forms
every session of the split once, each conversation by a new user, so every round writes its graph from nothing.
Per round: this process's CPU (user + system) per session formed; PostgreSQL's is reported apart. Prints the
medians of the rounds, each way, the median of the rounds' ratios, and the machine's load average."""

from __future__ import annotations

import argparse
import json
import operator
import os
import statistics
import sys
import time
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

from benchmarks.lib.locomo_data import DEFAULT_LOCOMO, SPLITS, load_conversations
from benchmarks.lib.stack import machine, throwaway_stack

AGENT = "graph-cpu"


def _sessions(conversations) -> list[tuple[str, list[tuple[str, datetime]]]]:
    """(conversation, [(text, created_at)]) per session, in date order, as formation receives LoCoMo's turns."""
    from portability.formats.locomo import DATE_FORMAT

    sessions = []
    for conversation in conversations:
        for number in sorted({turn.session for turn in conversation.turns}):
            turns = [turn for turn in conversation.turns if turn.session == number]
            start = datetime.strptime(turns[0].date.strip(), DATE_FORMAT).replace(tzinfo=UTC)
            sessions.append(
                (
                    conversation.sample_id,
                    [
                        (f"{turn.speaker}: {turn.text}", start + timedelta(seconds=30 * position))
                        for position, turn in enumerate(turns, start=1)
                    ],
                )
            )
    return sessions


@contextmanager
def _graph(enabled: bool):
    import formation.offline.provider as offline

    kept = offline.graph_of_facts
    if not enabled:
        offline.graph_of_facts = lambda facts, **_: {"entities": [], "relations": []}
    try:
        yield
    finally:
        offline.graph_of_facts = kept


def _form_round(agent, sessions, *, label: str) -> float:
    """Forms every session for a new user per conversation; returns this process's CPU seconds in formation."""
    from conversations.services.ingestion import MessageInput, session_append_messages
    from formation.models import FormationJob
    from formation.services.formation import session_form_memories

    cpu = 0.0
    for index, (sample_id, turns) in enumerate(sessions):
        appended = session_append_messages(
            agent=agent,
            user_external_id=f"{sample_id}-{label}",
            session_external_id=f"{sample_id}-{label}-{index}",
            messages=[MessageInput(role="user", content=text, created_at=at) for text, at in turns],
        )
        started = time.process_time()
        session_form_memories(session_id=appended.session.pk, trigger=FormationJob.Trigger.EXPLICIT)
        cpu += time.process_time() - started
    return cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=sorted(SPLITS), default="dev")
    parser.add_argument("--rounds", type=int, default=3, help="rounds each way, alternating")
    args = parser.parse_args()
    sessions = _sessions(load_conversations(DEFAULT_LOCOMO, sample_ids=list(SPLITS[args.split])))
    with throwaway_stack(extra_env={"LLM_PROVIDER": "offline"}) as stack:
        os.environ.update(stack.env)
        import django

        django.setup()
        from agents.models import Agent
        from facts.models import Entity, Relation

        agent = Agent.objects.create(external_id=AGENT, name=AGENT)
        _form_round(agent, sessions[:1], label="warm-up")  # models loaded once per process, not counted
        per_session: dict[str, list[float]] = {"with": [], "without": []}
        postgres: dict[str, list[float]] = {"with": [], "without": []}
        loads = [os.getloadavg()[0]]
        for number in range(args.rounds):
            for way in ("with", "without") if number % 2 == 0 else ("without", "with"):
                postgres_before = stack.cpu_seconds()["postgres"]
                with _graph(way == "with"):
                    cpu = _form_round(agent, sessions, label=f"{way}-{number}")
                postgres[way].append((stack.cpu_seconds()["postgres"] - postgres_before) * 1000 / len(sessions))
                per_session[way].append(cpu * 1000 / len(sessions))
                loads.append(os.getloadavg()[0])
                print(f"round {number} {way} the graph: {per_session[way][-1]:.1f} ms per session", flush=True)
        medians = {way: statistics.median(values) for way, values in per_session.items()}
        result = {
            "split": args.split,
            "sessions": len(sessions),
            "rounds_each_way": args.rounds,
            "cpu_ms_per_session": {way: [round(value, 1) for value in values] for way, values in per_session.items()},
            "cpu_ms_per_session_median": {way: round(value, 1) for way, value in medians.items()},
            "graph_adds_percent": round(100 * (medians["with"] / medians["without"] - 1), 1),
            # Each round's two runs are next to each other, so under the same load: their ratio is the steadier figure.
            "graph_adds_percent_paired_median": round(
                100 * (statistics.median(map(operator.truediv, per_session["with"], per_session["without"])) - 1), 1
            ),
            "postgres_cpu_ms_per_session_median": {
                way: round(statistics.median(values), 1) for way, values in postgres.items()
            },
            "entities_per_round": Entity.objects.filter(user__external_id__contains="-with-").count() // args.rounds,
            "relations_per_round": Relation.objects.filter(user__external_id__contains="-with-").count() // args.rounds,
            "load_average_1min": [round(load, 1) for load in loads],
            "machine": machine(),
        }
        print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
