"""Category assignment offline: how often the lexicons (facts/grammar/categories.py) file a statement where a reader
filed it, on the hand-labelled set tests/fixtures/categories/labelled_facts.jsonl (statements in the style formation
writes, from conversations written for it and from the fact audit's labelled set; rules in its README). The set is
split once, in the fixture, into a tuning part (the lexicons were adjusted on it) and a held-out part (never looked
at while tuning): the goal, accuracy >= 0.85, is on the held-out part (tests/benchmarks/test_category_accuracy.py).

    .venv/bin/python -m benchmarks.category_accuracy [--part held_out|tuning|all] [--errors] [--json PATH]

Prints the accuracy of each part, and for the chosen part the confusion by category (rows: the label; columns: what
was filed) and, with --errors, each statement filed elsewhere than its label; --json writes the figures (the
accuracy of each part and the confusion of each) to a file (benchmarks/results/categories_accuracy.json)."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from agents.categories import DEFAULT_CATEGORY_SLUGS
from facts.grammar.categories import statement_file

LABELLED = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "categories" / "labelled_facts.jsonl"
PARTS = ("tuning", "held_out")


@dataclass(frozen=True)
class Labelled:
    fact: str
    category: str
    part: str


def labelled_facts(path: Path = LABELLED) -> list[Labelled]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [Labelled(fact=row["fact"], category=row["category"], part=row["part"]) for row in rows]


def accuracy(rows: list[Labelled]) -> float:
    if not rows:
        return 0.0
    return sum(statement_file(row.fact).category == row.category for row in rows) / len(rows)


def _confusion(rows: list[Labelled]) -> str:
    pairs = Counter((row.category, statement_file(row.fact).category) for row in rows)
    slugs = [slug for slug in DEFAULT_CATEGORY_SLUGS if any(slug in pair for pair in pairs)]
    width = max(len(slug) for slug in slugs)
    lines = [" " * width + " " + " ".join(f"{slug[:5]:>5}" for slug in slugs) + "   n  acc"]
    for label in slugs:
        total = sum(count for (truth, _), count in pairs.items() if truth == label)
        if not total:
            continue
        cells = " ".join(f"{pairs.get((label, filed), 0) or '.':>5}" for filed in slugs)
        lines.append(f"{label:>{width}} {cells} {total:>3} {pairs.get((label, label), 0) / total:.2f}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=[*PARTS, "all"], default="held_out")
    parser.add_argument("--errors", action="store_true", help="list the statements filed elsewhere than their label")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    args = parser.parse_args()
    rows = labelled_facts()
    for part in PARTS:
        of_part = [row for row in rows if row.part == part]
        print(f"{part}: {len(of_part)} facts, accuracy {accuracy(of_part):.3f}")
    print(f"all: {len(rows)} facts, accuracy {accuracy(rows):.3f}")
    chosen = rows if args.part == "all" else [row for row in rows if row.part == args.part]
    print(f"\nconfusion ({args.part}; rows: label, columns: filed)\n{_confusion(chosen)}")
    if args.json is not None:
        figures = {
            part: {
                "facts": len(of_part := [row for row in rows if row.part == part]),
                "accuracy": round(accuracy(of_part), 4),
                "confusion": {
                    f"{truth} -> {filed}": count
                    for (truth, filed), count in sorted(
                        Counter((row.category, statement_file(row.fact).category) for row in of_part).items()
                    )
                },
            }
            for part in PARTS
        }
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    if args.errors:
        print()
        for row in chosen:
            filed = statement_file(row.fact)
            if filed.category != row.category:
                print(f"{row.category:>13} -> {filed.category:<13} {row.fact}  [{filed.value}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
