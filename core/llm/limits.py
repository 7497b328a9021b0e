"""Cutting generated text (an LLM's or the offline extractor's) to the character limits of what is stored."""

from __future__ import annotations


def text_cap(*, text: str, chars: int) -> str:
    """At most `chars` characters, cut at the last whitespace before the limit when there is one (a word cut in two
    reads as a typo), else at the limit itself (one long "word")."""
    if len(text) <= chars:
        return text
    boundary = max(text.rfind(" ", 0, chars + 1), text.rfind("\n", 0, chars + 1))
    return (text[:boundary] if boundary > 0 else text[:chars]).rstrip()


def words_cap(*, text: str, limit: int) -> str:
    """Cut to at most `limit` words, keeping line breaks (blobs are bullet lists)."""
    kept: list[str] = []
    remaining = limit
    for line in text.strip().splitlines():
        words = line.split()
        if remaining <= 0:
            break
        if len(words) > remaining:
            line = " ".join(words[:remaining])
        kept.append(line)
        remaining -= len(words)
    return "\n".join(kept)
