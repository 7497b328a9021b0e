"""The junk audit of formed facts (benchmarks/fact_audit.py): each kind of junk is found, and plain facts are not;
and it agrees with a reader: on facts the offline provider formed from chats written for this project,
hand-labelled junk or not by the rules in docs/benchmarks/method.md, its grammar and reference checks
(facts.grammar.defects) must find most of the junk and flag little else."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.fact_audit import AuditedFact, facts_audit
from facts.grammar.defects import facts_defects

LABELLED = Path(__file__).resolve().parent.parent / "fixtures" / "fact_audit" / "labelled_facts.jsonl"


def test_each_kind_of_junk_is_found_and_plain_facts_pass():
    injected = "<MemoryContext><UserMemory>- Gene's sister Ana lives in Porto and teaches maths.</UserMemory>"
    source = "Gene: I work as a nurse in Lisbon. My sister Ana lives in Porto and teaches maths."
    facts = [
        AuditedFact(content="Gene works as a nurse in Lisbon.", owner="a/gene", source_text=source),
        AuditedFact(content="Gene asked about the weather?", owner="a/gene"),
        AuditedFact(content="The user greeted the assistant.", owner="a/gene"),
        AuditedFact(content="Gene works as a nurse in Lisbon, Portugal.", owner="a/gene", source_text=source),
        AuditedFact(content="Gene works as a nurse.", owner="a/gene", source_text=source),
        AuditedFact(content="Gene works as a nurse.", owner="a/other", source_text=source),  # another store
        AuditedFact(content="Ana lives in Porto and teaches maths.", owner="a/gene", injected_memory=injected),
        AuditedFact(content="The user has a pet dog named Lucy.", owner="a/gene", source_text=source),
    ]

    audit = facts_audit(facts)

    assert audit["facts"] == 8 and audit["junk"] == 6
    assert audit["examples"]["question"] == ["Gene asked about the weather?"]
    assert audit["examples"]["greeting"] == ["The user greeted the assistant."]
    # Of two facts that restate each other the later one ("Portugal" is one word in five: 80% restated); a fact that
    # says less than another restates it; the same fact in another user's store is not a restatement.
    assert audit["examples"]["restates_other_fact"] == [
        "Gene works as a nurse in Lisbon, Portugal.",
        "Gene works as a nurse.",
    ]
    assert audit["examples"]["restates_injected_memory"] == ["Ana lives in Porto and teaches maths."]
    assert audit["examples"]["ungrounded"] == ["The user has a pet dog named Lucy."]
    assert audit["junk_percent"] == 75.0


def _labelled() -> list[dict]:
    return [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_audit_finds_what_a_reader_calls_junk():
    labelled = _labelled()
    flagged = [bool(defects) for defects in facts_defects(row["fact"] for row in labelled)]
    found = sum(1 for row, junk in zip(labelled, flagged, strict=True) if junk and row["junk"])
    precision = found / sum(flagged)
    recall = found / sum(row["junk"] for row in labelled)

    assert len(labelled) >= 150 and sum(row["junk"] for row in labelled) >= 35
    assert precision >= 0.9, precision
    assert recall >= 0.85, recall


def test_the_issues_examples_are_junk_each_for_its_reason():
    defects = facts_defects(
        [
            "The user's hard is all about finding balance.",
            "The user's favorite dairy-free treat was great chatting.",
            "The user got ideas from everywhere: people I know.",
            "The user loves it.",
            "The user's sister lives in Berlin.",
        ]
    )

    assert [sorted({defect.split(":")[0] for defect in found}) for found in defects] == [
        ["possessive"],
        ["mismatch"],
        ["person"],
        ["reference"],
        [],
    ]


def test_the_audit_counts_garbled_facts_as_junk():
    facts = [
        AuditedFact(content="The user painted it after I visited the beach.", owner="a"),
        AuditedFact(content="The user works as a nurse in Lisbon.", owner="a"),
    ]

    audit = facts_audit(facts)

    assert audit["junk"] == 1 and audit["person_percent"] == 50.0 and audit["reference_percent"] == 50.0
