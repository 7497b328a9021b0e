"""Junk audit of formed facts: the share that are questions, greetings, restatements of another fact of the same
owner, restatements of memory that had been injected into the conversation (mem0's users found 97.8% junk in one
audit: mem0 issue 4573), or not grounded in the messages they name as their source (most of their content words
are not there: made up). Those checks are the ones formation counts on every LLM reply (facts.grammar.output_rules),
here applied to what was stored. Then what a reader calls garbled, from spaCy's parse of each fact
(facts.grammar.defects): first or second person left in, a pronoun or demonstrative pointing at nothing in the fact,
a possessive of a non-noun, a fragment, words run together or missing, a complement that cannot describe its
subject. Its agreement with a reader is measured on a hand-labelled set (tests/fixtures/fact_audit/, rules in
docs/benchmarks/method.md; tests/benchmarks/test_fact_audit.py).

    .venv/bin/python -m benchmarks.fact_audit .data/benchmarks/locomo_end_to_end_offline_dev_facts.json

reads the facts a run of benchmarks/locomo_end_to_end.py dumped (which also prints this audit), and prints the
shares with examples of each kind. The target (issue 15) is under 5% junk on LoCoMo's dev split."""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from facts.grammar.defects import facts_defects
from facts.grammar.output_rules import content_words, grounded, is_greeting, is_question, restates

# The checks of a fact's grammar and references (facts.grammar.defects), by the name each defect starts with.
GRAMMAR_KINDS = ("person", "reference", "possessive", "fragment", "garbled", "mismatch")
KINDS = ("question", "greeting", "restates_other_fact", "restates_injected_memory", "ungrounded", *GRAMMAR_KINDS)


@dataclass(frozen=True)
class AuditedFact:
    content: str
    owner: str  # the store the fact belongs to (conversation and user): restatements are looked for within it
    injected_memory: str = ""  # the memory injected into the conversation the fact was formed from
    source_text: str = ""  # the messages it was formed from; empty: not checked


def _restating_others(facts: list[AuditedFact]) -> set[int]:
    """Facts whose content words another fact of the same owner already holds: of two that restate each other, the
    later one."""
    by_owner: dict[str, list[int]] = defaultdict(list)
    for index, fact in enumerate(facts):
        by_owner[fact.owner].append(index)
    words = [content_words(fact.content) for fact in facts]
    restating = set()
    for indexes in by_owner.values():
        for index in indexes:
            for other in indexes:
                if other == index or not restates(statement=facts[index].content, source_words=words[other]):
                    continue
                mutual = restates(statement=facts[other].content, source_words=words[index])
                if not mutual or other < index:
                    restating.add(index)
                    break
    return restating


def facts_audit(facts: list[AuditedFact], *, examples: int = 3) -> dict:
    """Counts and shares (%) per kind of junk, and of facts that are junk of any kind; a few examples of each."""
    flagged: dict[str, list[int]] = {kind: [] for kind in KINDS}
    restating = _restating_others(facts)
    defects = facts_defects(fact.content for fact in facts)
    for index, fact in enumerate(facts):
        for kind in dict.fromkeys(defect.split(":", 1)[0] for defect in defects[index]):
            flagged[kind].append(index)
        if is_question(fact.content):
            flagged["question"].append(index)
        if is_greeting(fact.content):
            flagged["greeting"].append(index)
        if index in restating:
            flagged["restates_other_fact"].append(index)
        if restates(statement=fact.content, source_words=content_words(fact.injected_memory)):
            flagged["restates_injected_memory"].append(index)
        if fact.source_text and not grounded(statement=fact.content, source_words=content_words(fact.source_text)):
            flagged["ungrounded"].append(index)
    junk = set().union(*flagged.values())
    total = len(facts)

    def share(count: int) -> float:
        return round(100.0 * count / total, 2) if total else 0.0

    return {
        "facts": total,
        "junk": len(junk),
        "junk_percent": share(len(junk)),
        **{f"{kind}_percent": share(len(indexes)) for kind, indexes in flagged.items()},
        "examples": {kind: [facts[index].content for index in indexes[:examples]] for kind, indexes in flagged.items()},
    }


def print_audit(audit: dict, *, label: str) -> None:
    print(f"\nJunk audit ({label}): {audit['junk']} of {audit['facts']} facts, {audit['junk_percent']}%")
    for kind in KINDS:
        print(f"  {kind:26} {audit[f'{kind}_percent']:6.2f}%   e.g. {audit['examples'][kind][:2]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("facts_file", type=Path, help="a *_facts.json written by benchmarks/locomo_end_to_end.py")
    args = parser.parse_args()
    dump = json.loads(args.facts_file.read_text(encoding="utf-8"))
    injected = dump.get("injected_memory", {})
    facts = [
        AuditedFact(
            content=item["content"],
            owner=item["owner"],
            injected_memory=injected.get(item["session"], ""),
            source_text=item.get("source_text", ""),
        )
        for item in dump["facts"]
    ]
    print_audit(facts_audit(facts), label=args.facts_file.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
