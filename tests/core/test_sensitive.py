"""The sensitive-data rules on this project's test set (tests/fixtures/sensitive/conversations.json: secrets of every
kind and benign look-alikes that must still be stored), and Hypothesis properties of the checksum rules and of
redaction on any text."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.safety.sensitive import (
    SensitiveKind,
    iban_valid,
    luhn_valid,
    sensitive_findings,
    text_redacted,
    text_without_secret_sentences,
)
from tests.fuzzing import examples, tally_add

pytestmark = pytest.mark.fuzz

TEST_SET = json.loads((Path(__file__).parent.parent / "fixtures" / "sensitive" / "conversations.json").read_text())
SECRETS = TEST_SET["secrets"]
BENIGN = TEST_SET["benign"]


def _text(case: dict) -> str:
    return "\n".join(case["messages"])


def test_the_test_set_covers_every_kind():
    assert {case["kind"] for case in SECRETS} == set(SensitiveKind.values)
    assert len(SECRETS) >= 30 and len(BENIGN) >= 20


@pytest.mark.parametrize("case", SECRETS, ids=[case["id"] for case in SECRETS])
def test_each_secret_is_found_with_its_kind_and_redaction_leaves_none_of_it(case):
    text = _text(case)
    findings = sensitive_findings(text)
    redacted = text_redacted(text=text, findings=findings)

    assert case["kind"] in {finding.kind for finding in findings}
    assert case["secret"] not in redacted
    assert f"[redacted {SensitiveKind(case['kind']).label}]" in redacted
    assert sensitive_findings(redacted) == []


@pytest.mark.parametrize("case", BENIGN, ids=[case["id"] for case in BENIGN])
def test_benign_look_alikes_are_left_alone(case):
    assert sensitive_findings(_text(case)) == []


def test_a_long_text_keeps_the_sentences_without_a_secret():
    text = "Gene lives in Lisbon. His wifi password is sunflower42. He plays the cello!\nHe has two cats."
    kept = text_without_secret_sentences(text=text, findings=sensitive_findings(text))
    assert kept == "Gene lives in Lisbon. He plays the cello!\nHe has two cats."


# --- properties of the checksum rules -----------------------------------------------------------------------------

CARD_PREFIXES = ["4", "51", "55", "2221", "2720", "34", "37", "6011", "65", "3528", "36"]


def _luhn_completed(body: str) -> str:
    return next(body + digit for digit in string.digits if luhn_valid(body + digit))


@st.composite
def card_numbers(draw) -> str:
    prefix = draw(st.sampled_from(CARD_PREFIXES))
    length = 15 if prefix in ("34", "37") else draw(st.sampled_from([16, 16, 19]))
    body = prefix + draw(
        st.text(alphabet=string.digits, min_size=length - 1 - len(prefix), max_size=length - 1 - len(prefix))
    )
    number = _luhn_completed(body)
    separator = draw(st.sampled_from(["", " ", "-"]))
    return separator.join(number[i : i + 4] for i in range(0, len(number), 4)) if separator else number


words = st.lists(st.sampled_from(["pay", "with", "the", "card", "please", "thanks", "on", "Friday", "my"]), max_size=6)


@given(number=card_numbers(), before=words, after=words)
@settings(max_examples=examples(200))
def test_any_valid_card_number_in_a_sentence_is_found(number, before, after):
    tally_add("sensitive-data texts")
    text = " ".join([*before, number, *after]) + "."
    findings = sensitive_findings(text)

    assert [(finding.kind, text[finding.start : finding.end]) for finding in findings] == [
        (SensitiveKind.CARD_NUMBER, number)
    ]


@given(number=card_numbers())
@settings(max_examples=examples(200))
def test_a_card_number_with_a_wrong_check_digit_is_left_alone(number):
    tally_add("sensitive-data texts")
    last = number[-1]
    wrong = number[:-1] + str((int(last) + 1) % 10)
    assert sensitive_findings(f"Order {wrong} shipped.") == []


IBAN_FORMATS = {"DE": "8n10n", "GB": "4a14n", "FR": "10n11c2n", "NL": "4a10n", "ES": "20n", "IT": "1a10n12c"}


@st.composite
def ibans(draw) -> str:
    country = draw(st.sampled_from(sorted(IBAN_FORMATS)))
    bban = ""
    for count, kind in re.findall(r"(\d+)([anc])", IBAN_FORMATS[country]):
        alphabet = {"a": string.ascii_uppercase, "n": string.digits, "c": string.ascii_uppercase + string.digits}[kind]
        bban += draw(st.text(alphabet=alphabet, min_size=int(count), max_size=int(count)))
    check = 98 - int("".join(str(int(char, 36)) for char in bban + country + "00")) % 97
    iban = f"{country}{check:02d}{bban}"
    return " ".join(iban[i : i + 4] for i in range(0, len(iban), 4)) if draw(st.booleans()) else iban


@given(iban=ibans())
@settings(max_examples=examples(200))
def test_any_valid_iban_is_found(iban):
    tally_add("sensitive-data texts")
    assert iban_valid(iban)
    text = f"Please send it to {iban} by Monday."
    assert [(finding.kind, text[finding.start : finding.end]) for finding in sensitive_findings(text)] == [
        (SensitiveKind.BANK_ACCOUNT, iban)
    ]


# --- properties on any text ------------------------------------------------------------------------------------------

PIECES = [case["messages"][0] for case in SECRETS + BENIGN] + [
    "password",
    "PIN",
    " is ",
    ": ",
    "4111 1111 1111 1111",
    "DE89 3704 0044 0532 0130 00",
    "\n",
    "  ",
]
any_text = st.one_of(
    st.text(max_size=400),
    st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=12)), max_size=10).map("".join),
)


@given(text=any_text)
@settings(max_examples=examples(300))
def test_findings_are_ordered_disjoint_spans_and_redaction_leaves_no_finding(text):
    tally_add("sensitive-data texts")
    findings = sensitive_findings(text)

    for finding in findings:
        assert 0 <= finding.start < finding.end <= len(text)
    assert all(first.end <= second.start for first, second in zip(findings, findings[1:], strict=False))
    redacted = text_redacted(text=text, findings=findings)
    assert sensitive_findings(redacted) == []
    kept = text_without_secret_sentences(text=text, findings=findings)
    assert sensitive_findings(kept) == []
