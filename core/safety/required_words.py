"""Which words a regular expression needs: for a table's alternation of names ("(?:door|gate)\\s+codes?|passw[oö]rt"),
a set of words such that any text it matches holds one of them. core.safety.secret_phrases runs a rule only on a text
that holds one of its words, which a set lookup tells: most text needs no rule at all.

Read from the expression's parse (Python's own parser), alternative by alternative: each alternative's longest run
of letters that every match must contain (the later of two as long, usually the head noun: "door code" gives
"code"), or, when a required group offers a choice, one word from each of its branches. A word is marked as the start
of a word in the text, or as a piece that may sit inside one ("passwort" after `\\w*`, in "Mailpasswort")."""

from __future__ import annotations

import re

# Python's own expression parser and its opcodes (typeshed has no stubs for these private modules).
import re._constants as _sre  # type: ignore[import-not-found]
import re._parser as _sre_parser  # type: ignore[import-not-found]
from typing import Any

# Words are compared on their first STEM letters: "password" and "passwort" as "passwo", "código" and "códigos".
STEM = 6
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzàáâãäåçèéêëìíîïñòóôõöùúûüýÿßœæ")

RequiredWord = tuple[str, bool]  # (lowercase letters, whether it begins a word of the text)


def required_words(pattern: str) -> set[RequiredWord] | None:
    """Words one of which any match of `pattern` holds; None when some alternative needs no letter at all (its rule
    must then read every text)."""
    words: set[RequiredWord] = set()
    for alternative in _alternatives(pattern):
        required = _sequence_words(_sre_parser.parse(alternative, re.IGNORECASE).data, at_start=True)
        if required is None:
            return None
        words |= required
    return words


def _alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of an expression, each parsed alone: the parser would otherwise factor their common
    first letters out ("codice|combinazione" as "co" + "dice|mbinazione")."""
    parts, depth, start, escaped, in_class = [], 0, 0, False, False
    for position, char in enumerate(pattern):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(pattern[start:position])
            start = position + 1
    return [*parts, pattern[start:]]


def _sequence_words(items: Any, *, at_start: bool) -> set[RequiredWord] | None:
    """The best word set among what a sequence requires: a run of letters, or a required group's words."""
    candidates: list[tuple[tuple[int, int], set[RequiredWord]]] = []
    run, run_at_start, after_letter = "", at_start, not at_start

    def close_run() -> None:
        nonlocal run
        if len(run) >= 2:
            candidates.append(((min(len(run), STEM), len(candidates)), {(run, run_at_start)}))
        run = ""

    for op, argument in items:
        if op is _sre.LITERAL and chr(argument).lower() in _LETTERS:
            if not run:
                run_at_start = not after_letter
            run += chr(argument).lower()
            after_letter = True
            continue
        close_run()
        found: set[RequiredWord] | None = None
        if op is _sre.SUBPATTERN:
            found = _sequence_words(argument[3].data, at_start=not after_letter)
        elif op is _sre.BRANCH:
            branches = [_sequence_words(branch.data, at_start=not after_letter) for branch in argument[1]]
            if all(branch is not None for branch in branches):
                found = {word for branch in branches if branch is not None for word in branch}
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) and argument[0] >= 1:
            found = _sequence_words(argument[2].data, at_start=not after_letter)
        if found:
            # A choice is only as good as its shortest word, and worse the more words it needs.
            shortest = min(min(len(word), STEM) for word, _ in found)
            candidates.append(((shortest - len(found) // 4, len(candidates)), found))
        after_letter = _letter_may_precede(op, argument, after_letter)
    close_run()
    return max(candidates, key=lambda candidate: candidate[0])[1] if candidates else None


def _letter_may_precede(op: Any, argument: Any, after_letter: bool) -> bool:
    """Whether a letter may come right before what follows this item: spaces and punctuation say no; an optional item
    that ends in a space leaves it as it was."""
    if op in (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT):
        return after_letter
    if op is _sre.LITERAL:
        return chr(argument).lower() in _LETTERS
    if op is _sre.IN:
        return not all(_not_a_letter(item) for item in argument)
    if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT):
        ends = _ends_with_letter(argument[2].data)
        return ends or (after_letter if argument[0] == 0 else False)
    if op is _sre.SUBPATTERN:
        return _ends_with_letter(argument[3].data)
    return True


def _not_a_letter(item: Any) -> bool:
    """An item of a character class that matches no letter: a digit, a space, punctuation."""
    op, argument = item
    if op is _sre.LITERAL:
        return chr(argument).lower() not in _LETTERS
    if op is _sre.CATEGORY:
        return argument in (_sre.CATEGORY_DIGIT, _sre.CATEGORY_SPACE)
    if op is _sre.RANGE:
        return all(not chr(code).isalpha() for code in range(argument[0], argument[1] + 1))
    return False


def _ends_with_letter(items: Any) -> bool:
    if not items:
        return False
    op, argument = items[-1]
    if op is _sre.BRANCH:
        return any(_ends_with_letter(branch.data) for branch in argument[1])
    return _letter_may_precede(op, argument, True)
