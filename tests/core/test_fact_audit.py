"""The junk audit of formed facts (benchmarks/fact_audit.py): each kind of junk is found, and plain facts are not."""

from __future__ import annotations

from benchmarks.fact_audit import AuditedFact, facts_audit


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
