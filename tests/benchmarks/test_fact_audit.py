"""The junk audit of formed facts (benchmarks/fact_audit.py): each kind of junk is found, and plain facts are not;
and it agrees with a reader: on facts the offline provider formed from chats written for this project and from
LoCoMo's dev conversations, hand-labelled junk or not by the rules in docs/benchmarks/method.md, its grammar and
reference checks (facts.grammar.defects) must find most of the junk and flag little else, on the labels they were
tuned on and on labels held out (whole conversations the checks were never tuned on). LoCoMo's facts are kept
without their text (docs/decisions/0062-labels-of-locomo-facts-without-its-text.md): their part runs where the
data is present."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.fact_audit import AuditedFact, facts_audit
from benchmarks.fact_audit_labels import locomo_labelled_facts, locomo_template, locomo_text, template_words_only
from facts.grammar.defects import facts_defects

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "fact_audit"
LABELLED = FIXTURES / "labelled_facts.jsonl"
LABELLED_LOCOMO = FIXTURES / "labelled_locomo_facts.jsonl"


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


# On the held-out labels (LoCoMo's conv-30 and two written chats, never tuned on): the checks measured 0.95 and 0.76
# (docs/benchmarks/history.md section 16). The goal is 0.9 for both; the recall bar holds what was reached.
HELD_OUT_PRECISION = 0.9
HELD_OUT_RECALL = 0.75


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _agreement(rows: list[dict]) -> tuple[float, float]:
    """Precision and recall of the checks on "junk" against the labels."""
    flagged = [bool(defects) for defects in facts_defects(row["fact"] for row in rows)]
    found = sum(1 for row, junk in zip(rows, flagged, strict=True) if junk and row["junk"])
    return found / sum(flagged), found / sum(row["junk"] for row in rows)


def _locomo() -> list[dict]:
    rebuilt = locomo_labelled_facts(_rows(LABELLED_LOCOMO))
    if rebuilt is None:
        pytest.skip("LoCoMo's data is not here (../shared/benchmarks/locomo/): its labelled facts cannot be rebuilt")
    return rebuilt


def test_the_labelled_set_is_split_by_conversation_and_keeps_no_text_of_locomo():
    written, locomo = _rows(LABELLED), _rows(LABELLED_LOCOMO)
    parts = {}
    for row in written:
        parts.setdefault(row["source"].split(" ")[0], set()).add(row["part"])
    for row in locomo:
        parts.setdefault(row["sample_id"], set()).add(row["part"])

    assert len(written) + len(locomo) >= 400 and sum(row["junk"] for row in written + locomo) >= 120
    assert all(len(found) == 1 for found in parts.values()), parts  # no conversation on both sides
    assert {"tuning", "held_out"} == {part for found in parts.values() for part in found}
    assert all(template_words_only(row["template"]) and "fact" not in row for row in locomo)


def test_the_locomo_labels_rebuild_their_facts():
    locomo = _locomo()  # raises if a template no longer rebuilds the text its hash names

    assert len(locomo) == len(_rows(LABELLED_LOCOMO)) >= 200


def test_the_audit_finds_what_a_reader_calls_junk_on_the_labels_it_was_tuned_on():
    precision, recall = _agreement([row for row in _rows(LABELLED) if row["part"] == "tuning"])

    assert precision >= 0.9, precision
    assert recall >= 0.85, recall


def test_the_audit_agrees_with_a_reader_on_labels_held_out():
    rows = [row for row in _rows(LABELLED) + _locomo() if row["part"] == "held_out"]
    precision, recall = _agreement(rows)

    assert len(rows) >= 100
    assert precision >= HELD_OUT_PRECISION, precision
    assert recall >= HELD_OUT_RECALL, recall


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


def test_a_template_rebuilds_a_fact_from_its_turn_and_holds_none_of_its_words():
    turn = "Honestly I love my pottery class, my teacher Ines says I'm a natural!"
    fact = "Talia loves their pottery class."

    template = locomo_template(fact, turn=turn, speaker="Talia")

    assert template == "{S} {2+s} their {4} {5}."
    assert template_words_only(template) and locomo_text(template, turn=turn, speaker="Talia") == fact
    # A word the turn does not hold and the extractor never adds cannot be kept without writing it.
    assert locomo_template("Talia loves ceramics.", turn=turn, speaker="Talia") is None
