"""The rules built from core/safety/secret_lexicon: each runs only on a text that holds one of the words it needs,
and that gate never changes what is found; context carries across the clauses of one message; values are the kind's
shape in every language."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.safety import secret_phrases
from core.safety.required_words import required_words
from core.safety.sensitive import SensitiveKind, sensitive_findings, text_redacted
from tests.fuzzing import examples, tally_add

CORPUS = [
    json.loads(line)
    for line in (Path(__file__).parent.parent / "fixtures" / "sensitive" / "corpus.jsonl").read_text().splitlines()
]


def _every_rule(text: str) -> set[tuple[str, int, int]]:
    """What every rule finds reading the whole text (no gate, no windows)."""
    return {
        (finding.kind, finding.start, finding.end)
        for rule in secret_phrases._index().rules
        for finding in rule.read(text, [(0, len(text))], [])
    }


def _gated(text: str) -> set[tuple[str, int, int]]:
    return {(finding.kind, finding.start, finding.end) for finding in secret_phrases.phrase_findings(text)}


@pytest.mark.parametrize("line", CORPUS, ids=[line["id"] for line in CORPUS])
def test_the_gate_skips_only_rules_that_find_nothing(line):
    assert _gated(line["text"]) == _every_rule(line["text"])


words_of_the_tables = st.sampled_from(
    sorted({word for line in CORPUS for word in line["text"].split()} | {"Mailpasswort:", "Handy-PIN", "TAN", "4471"})
)


@given(st.lists(words_of_the_tables, min_size=1, max_size=12).map(" ".join))
@settings(max_examples=examples(300))
def test_the_gate_skips_only_rules_that_find_nothing_on_any_mix_of_their_words(text):
    tally_add("sensitive-data texts")
    assert _gated(text) == _every_rule(text)


@pytest.mark.parametrize("joiner", [" ", "\n"])
def test_the_gate_reads_a_long_message_only_around_the_words_and_finds_the_same(joiner):
    # A message of many lines: each rule reads only the windows around its words, which must find what reading the
    # whole text finds, whatever comes before or after.
    for start in range(0, len(CORPUS), 40):
        text = joiner.join(line["text"] for line in CORPUS[start : start + 40])
        assert _gated(text) == _every_rule(text)


def test_a_rule_that_reads_every_text_reads_all_of_it():
    # The French rule for a question quoted by name needs no word the gate can index: it reads the whole text, not
    # only its start.
    said = "Pour « la ville où je suis né » j’ai mis Valence."
    text = "On a parlé des vacances et du jardin toute la soirée. " * 8 + said

    assert _found(text) == [(SensitiveKind.SECURITY_ANSWER, "Valence")]


def test_past_the_reads_a_rule_allows_the_rest_is_taken_as_a_secret():
    # Hundreds of names in one text: each rule reads at most MAX_READS of them, and the rest of the text is withheld
    # with them, so that a value after them is never kept.
    text = "my password " * (secret_phrases.MAX_READS + 20) + "my password is Tulip-4ever"
    redacted = text_redacted(text=text, findings=sensitive_findings(text))

    assert "Tulip-4ever" not in redacted


@pytest.mark.parametrize(
    ("pattern", "words"),
    [
        (r"(?:door|gate)\s+codes?", {("code", True)}),
        (r"passw(?:o|ö)rt|\w*kennwort", {("passw", True), ("kennwort", False)}),
        (r"(?:code\s+)?pin", {("pin", True)}),
        (r"\d[\s-]?digit\s+codes?", {("digit", True)}),
        (r"\d{4}", None),
    ],
)
def test_the_words_a_name_needs(pattern, words):
    assert required_words(pattern) == words


def _found(text: str) -> list[tuple[str, str]]:
    return [(finding.kind, text[finding.start : finding.end]) for finding in sensitive_findings(text)]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        # What follows a card number, and a login, is as secret as they are.
        (
            "Card 4539 1488 0343 6467, exp 09/28, and the code is 913.",
            [(SensitiveKind.CARD_NUMBER, "4539 1488 0343 6467"), (SensitiveKind.CARD_SECURITY_CODE, "913")],
        ),
        (
            "Acceso a la banca online: marta.v / Ostra_31",
            [(SensitiveKind.ACCOUNT_LOGIN, "marta.v / Ostra_31")],
        ),
        # The same value stays memory without the context.
        ("The code is 913 in the school's building guide.", []),
        ("Exp 09/28 on the new one, and the code of conduct is 913 pages.", []),
    ],
)
def test_context_carries_across_the_clauses_of_one_message(text, found):
    assert _found(text) == found


def test_a_security_answer_is_found_in_the_sentences_after_its_question():
    text = "Sicherheitsfrage: Name der Grundschule. Antwort: Lindenhof"
    # The question is taken out too (it says what the answer is about): more than the secret, never less.
    assert (SensitiveKind.SECURITY_ANSWER, "Lindenhof") in _found(text)


@pytest.mark.parametrize(
    "text",
    [
        "Minha senha é fraca, preciso trocar.",
        "La clave del éxito es dormir 8 horas.",
        "Le mot de passe du wifi est collé sous la box.",
        "Das Passwort muss mindestens 12 Zeichen lang sein.",
        "La password è scaduta, devo cambiarla.",
        "I forgot my password again, can you remind me how to reset it?",
    ],
)
def test_what_is_said_about_a_secret_is_not_its_value(text):
    assert _found(text) == []


def test_a_redaction_label_is_never_read_as_a_name_or_a_value():
    text = "Mi contraseña es [redacted password or PIN] y la respuesta de seguridad es [redacted security answer]."
    assert _found(text) == []
