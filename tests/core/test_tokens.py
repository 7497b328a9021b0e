import random
import string

import pytest

from core.tokens import _tokenizer, count_tokens, count_tokens_batch


def _tokenizer_counts(texts: list[str]) -> list[int]:
    return [len(e.ids) for e in _tokenizer().encode_batch(texts, add_special_tokens=False)]


TRICKY = [
    "",
    " ",
    "I moved to Lisbon last month.",
    "Don't!! e-mail me: x@y.com (or call +1-555-0100) #tags ~home ^_^ {ok} |x| `code`",
    "tab\there\nnew\r\nline   spaces",
    "[CLS] a [SEP] b [MASK][PAD][UNK] [cls] [not special",
    "x\x7fy\x00z\x01w",
    "unaffable" * 20,  # longer than WordPiece's 100 characters: one [UNK]
    "Café naïve résumé 日本語 \u2028 \u00a0 e\u0301 😀",
    "ALL CAPS and MiXeD CaSe 123abc456",
]


@pytest.mark.parametrize("text", TRICKY)
def test_counts_are_the_tokenizers_own(text):
    assert count_tokens_batch([text]) == _tokenizer_counts([text])
    assert count_tokens(text) == _tokenizer_counts([text])[0]


def test_a_batch_mixing_plain_ascii_and_other_text_keeps_each_count_in_place():
    rng = random.Random(7)
    alphabet = string.printable + "[]éü日\u00a0\x7f"
    texts = TRICKY + ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(2000)]
    assert count_tokens_batch(texts) == _tokenizer_counts(texts)
