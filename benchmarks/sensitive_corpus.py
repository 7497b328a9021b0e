"""The sensitive-data screen (core.safety.sensitive) on the labelled corpus tests/fixtures/sensitive/corpus.jsonl:
secrets said the way people say them and benign look-alikes, in English, Spanish, Portuguese, French, German and
Italian, each line one message.

    .venv/bin/python -m benchmarks.sensitive_corpus                       # every line, by split, language and kind
    .venv/bin/python -m benchmarks.sensitive_corpus --split held_out      # the lines kept out of the rules' tuning
    .venv/bin/python -m benchmarks.sensitive_corpus --misses              # and each line it got wrong

A secret line is caught when redaction leaves none of its values (`values`: what must never be stored); a benign line
is kept when the screen finds nothing in it. Per language: recall (secret lines caught), precision (caught secret
lines among all lines the screen flagged) and benign kept; per kind the same. The kind is right when a finding has the
kind the line's kind maps to. The goals (docs/security.md): recall >= 0.97 and precision >= 0.95 in every language,
benign kept >= 95%. Prints JSON; exits 1 when a goal is missed.

`split` says how each line came: `tune`, written with the rules; `held_out`, written before the rules and committed
first; `held_out_2` to `held_out_4`, each written after the rules had been fixed for the batch before, committed, then
scored once. A batch's first score is its honest figure (FIRST_MEASURED, printed with the report): the gaps each batch
showed were then closed for their kinds, so that batch no longer measures phrasings the rules have not seen."""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "sensitive" / "corpus.jsonl"
GOALS = {"recall": 0.97, "precision": 0.95, "benign_kept": 0.95}
SPLITS = ("tune", "held_out", "held_out_2", "held_out_3", "held_out_4")
# What each held-out batch scored the one time it was scored before the rules were fixed for it (all its lines).
FIRST_MEASURED = {
    "held_out": {"recall": 0.958, "precision": 1.0, "benign_kept": 1.0},
    "held_out_2": {"recall": 0.667, "precision": 1.0, "benign_kept": 1.0},
    "held_out_3": {"recall": 0.542, "precision": 1.0, "benign_kept": 1.0},
    "held_out_4": {"recall": 0.521, "precision": 1.0, "benign_kept": 1.0},
}
# The finding kinds a line's kind may be recorded as (core.safety.sensitive.SensitiveKind values).
EXPECTED_KINDS = {
    "password": {"password"},
    "pin": {"password"},
    "door_code": {"password"},
    "card_security_code": {"card_security_code"},
    "security_answer": {"security_answer"},
    "one_time_code": {"one_time_code"},
    "login": {"account_login", "password"},
}


@dataclass(frozen=True)
class Scored:
    line: dict
    flagged: bool  # the screen found something
    caught: bool  # a secret line: none of its values left after redaction
    kind_right: bool


def corpus(split: str = "all") -> list[dict]:
    lines = [json.loads(text) for text in CORPUS.read_text(encoding="utf-8").splitlines() if text.strip()]
    return [line for line in lines if split == "all" or line["split"] == split]


def score(lines: Iterable[dict]) -> list[Scored]:
    from core.safety.sensitive import sensitive_findings, text_redacted

    scored = []
    for line in lines:
        findings = sensitive_findings(line["text"])
        redacted = text_redacted(text=line["text"], findings=findings)
        kinds = {finding.kind for finding in findings}
        secret = line["label"] == "secret"
        scored.append(
            Scored(
                line=line,
                flagged=bool(findings),
                caught=secret and not any(value in redacted for value in line["values"]),
                kind_right=secret and bool(kinds & EXPECTED_KINDS[line["kind"]]),
            )
        )
    return scored


def _rates(scored: list[Scored]) -> dict[str, float | int]:
    secrets = [item for item in scored if item.line["label"] == "secret"]
    benign = [item for item in scored if item.line["label"] == "benign"]
    caught = sum(item.caught for item in secrets)
    false_alarms = sum(item.flagged for item in benign)
    rates: dict[str, float | int] = {"secrets": len(secrets), "benign": len(benign)}
    if secrets:
        rates |= {
            "recall": round(caught / len(secrets), 3),
            "kind_right": round(sum(item.kind_right for item in secrets) / len(secrets), 3),
        }
    if caught or false_alarms:
        rates["precision"] = round(caught / (caught + false_alarms), 3)
    if benign:
        rates["benign_kept"] = round(1 - false_alarms / len(benign), 3)
    return rates


def report(scored: list[Scored]) -> dict:
    by_language: dict[str, list[Scored]] = defaultdict(list)
    by_kind: dict[str, list[Scored]] = defaultdict(list)
    for item in scored:
        by_language[item.line["lang"]].append(item)
        by_kind[f"{item.line['label']}:{item.line['kind']}"].append(item)
    return {
        "overall": _rates(scored),
        "languages": {language: _rates(items) for language, items in sorted(by_language.items())},
        "kinds": {kind: _rates(items) for kind, items in sorted(by_kind.items())},
    }


def goals_missed(result: dict) -> list[str]:
    """Each goal a language (or the whole corpus, for benign kept) misses, as "<language> <measure> <value>"."""
    missed = [
        f"{language} {measure} {rates.get(measure)}"
        for language, rates in result["languages"].items()
        for measure in ("recall", "precision")
        if rates.get(measure, 0) < GOALS[measure]
    ]
    if result["overall"].get("benign_kept", 0) < GOALS["benign_kept"]:
        missed.append(f"overall benign_kept {result['overall'].get('benign_kept')}")
    return missed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=["all", *SPLITS], default="all")
    parser.add_argument("--misses", action="store_true", help="list each line the screen got wrong")
    args = parser.parse_args(argv)
    scored = score(corpus(args.split))
    result = {"split": args.split, **report(scored)}
    if args.split == "all":
        result["splits"] = {split: report(score(corpus(split)))["overall"] for split in SPLITS}
        result["first_measured"] = FIRST_MEASURED
    if args.misses:
        result["misses"] = [
            {"id": item.line["id"], "text": item.line["text"]}
            for item in scored
            if (item.line["label"] == "secret" and not item.caught) or (item.line["label"] == "benign" and item.flagged)
        ]
    missed = goals_missed(result)
    result["goals_missed"] = missed
    print(json.dumps(result, indent=1, ensure_ascii=False))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
