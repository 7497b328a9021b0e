"""The sensitive-data screen on the labelled corpus (tests/fixtures/sensitive/corpus.jsonl), scored as
benchmarks/sensitive_corpus.py scores it: the goals of docs/security.md hold in every language on the whole corpus,
every secret is found with its kind, and no held-out batch scores below what it scored the one time it was scored
before the rules were fixed for it. A correctness check: nothing here is timed."""

import pytest

from benchmarks import sensitive_corpus


def test_the_corpus_is_what_the_goals_are_measured_on():
    lines = sensitive_corpus.corpus()
    secrets = [line for line in lines if line["label"] == "secret"]
    benign = [line for line in lines if line["label"] == "benign"]

    assert len(lines) >= 300 and len(secrets) >= 150 and len(benign) >= 150
    assert len({line["lang"] for line in lines}) >= 6
    assert {line["kind"] for line in secrets} == set(sensitive_corpus.EXPECTED_KINDS)
    assert {line["split"] for line in lines} == set(sensitive_corpus.SPLITS)
    assert all(value in line["text"] for line in secrets for value in line["values"])
    assert len({line["id"] for line in lines}) == len(lines)


def test_the_goals_hold_in_every_language():
    result = sensitive_corpus.report(sensitive_corpus.score(sensitive_corpus.corpus()))

    assert sensitive_corpus.goals_missed(result) == []
    assert set(result["languages"]) == {"en", "es", "pt", "fr", "de", "it"}


@pytest.mark.parametrize("split", sorted(sensitive_corpus.FIRST_MEASURED))
def test_no_held_out_batch_scores_below_its_first_measure(split):
    scored = sensitive_corpus.report(sensitive_corpus.score(sensitive_corpus.corpus(split)))["overall"]

    for measure, first in sensitive_corpus.FIRST_MEASURED[split].items():
        assert scored[measure] >= first, measure


def test_each_secret_is_found_with_its_kind():
    scored = sensitive_corpus.score(sensitive_corpus.corpus())

    missed = [item.line["id"] for item in scored if item.line["label"] == "secret" and not item.kind_right]
    assert missed == []
