"""The offline extractor (formation/offline/provider.py) on its unit fixtures (tests/fixtures/offline_extractor/):
precision and recall of its facts and reflections against what a careful reader notes (on the cases the rules were
written against, and on held-out cases written afterwards), how many facts come out of sentences that
hold two statements, and how much of what it says is noise (reflections nobody asked for, or the same text for
different users).

    .venv/bin/python -m benchmarks.offline_extractor                      # the current extractor
    .venv/bin/python -m benchmarks.offline_extractor --module old.py -v   # another version of offline.py, per case

docs/formation.md quotes the figures of the version before issue 17 and of the current one."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
from collections import Counter
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent
FIXTURES = REPO_DIR / "tests" / "fixtures" / "offline_extractor" / "conversations.json"


def _normalised(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".")


def _inputs(conversation: dict) -> dict:
    messages = [
        {"number": number, "role": "user", "text": text, "date": "2026-11-23 10:00"}
        for number, text in enumerate(conversation["messages"], start=1)
    ]
    return {"messages": messages, "max_words": 30, "facts": [], "memory_text": ""}


def _ask(provider, purpose: str, inputs: dict) -> dict:
    from core.llm.base import LLMRequest

    return json.loads(provider.complete(LLMRequest(purpose=purpose, messages=[], inputs=inputs)).text)


def _scores(found: set[str], expected: set[str]) -> tuple[int, int, int]:
    return len(found & expected), len(found), len(expected)


def extractor_measure(provider, *, split: str = "conversations") -> dict:
    """Figures of one provider on one split of the fixtures, and per case what it got wrong. `conversations`: the
    cases the rules were written against; `held_out`: cases written afterwards and never tuned on."""
    conversations = json.loads(FIXTURES.read_text())[split]
    totals = Counter()
    reflection_users: dict[str, set[str]] = {}
    cases = []
    for conversation in conversations:
        inputs = _inputs(conversation)
        facts = {_normalised(fact["content"]) for fact in _ask(provider, "extract_facts", inputs)["facts"]}
        expected_facts = {_normalised(fact) for fact in conversation["facts"]}
        notes = _ask(provider, "reflect", inputs)
        reflections = {_normalised(note) for level in ("agent", "user", "session") for note in notes.get(level, [])}
        expected_reflections = {_normalised(note) for notes in conversation["reflections"].values() for note in notes}
        for note in reflections:
            reflection_users.setdefault(note, set()).add(conversation["user"])
        right, said, wanted = _scores(facts, expected_facts)
        totals.update(facts_right=right, facts_said=said, facts_wanted=wanted)
        if conversation.get("compound"):
            totals.update(compound_right=right, compound_wanted=wanted)
        right, said, wanted = _scores(reflections, expected_reflections)
        totals.update(reflections_right=right, reflections_said=said, reflections_wanted=wanted)
        cases.append(
            {
                "id": conversation["id"],
                "facts_missed": sorted(expected_facts - facts),
                "facts_wrong": sorted(facts - expected_facts),
                "reflections_missed": sorted(expected_reflections - reflections),
                "reflections_noise": sorted(reflections - expected_reflections),
            }
        )

    def ratio(part: str, whole: str) -> float:
        return round(totals[part] / totals[whole], 3) if totals[whole] else 1.0

    return {
        "conversations": len(conversations),
        "facts": {
            "expected": totals["facts_wanted"],
            "extracted": totals["facts_said"],
            "precision": ratio("facts_right", "facts_said"),
            "recall": ratio("facts_right", "facts_wanted"),
            "compound_sentences_recall": ratio("compound_right", "compound_wanted"),
        },
        "reflections": {
            "expected": totals["reflections_wanted"],
            "written": totals["reflections_said"],
            "precision": ratio("reflections_right", "reflections_said"),
            "recall": ratio("reflections_right", "reflections_wanted"),
            "noise": totals["reflections_said"] - totals["reflections_right"],
            "same_text_for_several_users": sum(len(users) > 1 for users in reflection_users.values()),
        },
        "cases": cases,
    }


def _provider(module_path: str | None):
    if module_path is None:
        from formation.offline.provider import OfflineLLM

        return OfflineLLM()
    spec = importlib.util.spec_from_file_location("offline_under_test", module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.OfflineLLM()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--module", help="path of another version of formation/offline/provider.py to measure")
    parser.add_argument("-v", "--verbose", action="store_true", help="what each case missed or got wrong")
    arguments = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings.test")
    import django

    django.setup()
    provider = _provider(arguments.module)
    for split in ("conversations", "held_out"):
        figures = extractor_measure(provider, split=split)
        cases = figures.pop("cases")
        print(split, json.dumps(figures, indent=2))
        if arguments.verbose:
            for case in cases:
                problems = {key: value for key, value in case.items() if key != "id" and value}
                if problems:
                    print("  ", case["id"], json.dumps(problems))


if __name__ == "__main__":
    main()
