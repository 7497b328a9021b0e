"""Token counts: the tokenizer's own on ordinary text, never fewer than WordPiece gives without its 100-character
cut-off (which turns any longer "word" into one [UNK]), and never small for a large text. Hypothesis drives texts
built from the pieces that break counters: long words, whitespace runs, characters the normalizer drops, special
tokens, accents, CJK, emoji."""

from __future__ import annotations

import random
import re
import string

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.llm.tokens import _tokenizer, count_tokens, count_tokens_batch
from tests.fuzzing import examples, tally_add
from tests.tokens_support import (
    FREE_WHITESPACE,
    MAX_CHARS_PER_TOKEN,
    ORDINARY_PIECES,
    any_text,
    wordpiece_count,
)

pytestmark = pytest.mark.fuzz


def _tokenizer_counts(texts: list[str]) -> list[int]:
    return [len(e.ids) for e in _tokenizer().encode_batch(texts, add_special_tokens=False)]


# Ordinary: no word WordPiece cannot split, no dropped character, no whitespace run of 8 or more.
ordinary_text = (
    st.lists(st.sampled_from(ORDINARY_PIECES), max_size=12).map(" ".join).filter(lambda t: not re.search(r"\s{8}", t))
)


@given(text=any_text)
@settings(max_examples=examples(300))
@example(text="x" * 1_000_000)
@example(text="\u200b" * 1000)
def test_a_count_is_never_below_what_the_text_costs(text):
    """What the issue's probe broke: a 1 MB "word" counted as a handful of tokens."""
    tally_add("token counter texts")
    counted = count_tokens(text)
    if len(text) <= 2000:  # the reference is quadratic in a word's length
        assert counted >= wordpiece_count(text)
    assert len(text) <= MAX_CHARS_PER_TOKEN * counted + FREE_WHITESPACE


@given(text=ordinary_text)
@settings(max_examples=examples(100))
def test_ordinary_text_counts_exactly_what_the_tokenizer_counts(text):
    tally_add("token counter texts")
    assert count_tokens(text) == _tokenizer_counts([text])[0]


@given(texts=st.lists(any_text, max_size=8))
@settings(max_examples=examples(100))
def test_a_batch_counts_each_text_as_alone(texts):
    """The batch's plain-ASCII fast path and the tokenizer's path agree, each count in its place."""
    tally_add("token counter texts")
    assert count_tokens_batch(texts) == [count_tokens(text) for text in texts]


def test_a_large_random_batch_mixing_plain_ascii_and_other_text_keeps_each_count_in_place():
    rng = random.Random(7)
    alphabet = string.printable + "[]éü日\u00a0\x7f"
    texts = ORDINARY_PIECES + ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(2000)]
    assert count_tokens_batch(texts) == [count_tokens(text) for text in texts]


def test_long_words_and_dropped_characters_count_one_token_each():
    assert count_tokens("x" * 1_000_000) == 1_000_000
    assert count_tokens("unaffable" * 20) == 180
    assert count_tokens("\u200b" * 100) == 100
    assert count_tokens(" " * 100) == 12
    assert count_tokens("Lisbon " + "z" * 150) == count_tokens("Lisbon") + 150
