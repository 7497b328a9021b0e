"""Lists answered whole: a question that asks for every item of a kind ranks the items of that kind as one more signal
of the fusion (docs/decisions/0058-list-questions.md). What is asked and which rows are its items is the domain's to
say (facts.selectors.list_questions); here, only the signal's order: the entries by their best member's fused score,
then round by round, so that every entry ranks before a second member of any."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def entries_interleaved(*, entries: Sequence[Sequence[int]], scores: Mapping[int, float], limit: int) -> list[int]:
    """Up to `limit` ids from the entries: the entries ordered by their best member's score (an entry no member of
    which was scored keeps its place after those), each entry's members by score, then taken round by round (every
    entry's best, then every entry's second, ...); an id in two entries is taken once."""
    ordered = [sorted(members, key=lambda pk: -scores.get(pk, 0.0)) for members in entries if members]
    ordered.sort(key=lambda members: -max(scores.get(pk, 0.0) for pk in members))
    taken: dict[int, None] = {}
    for place in range(max((len(members) for members in ordered), default=0)):
        for members in ordered:
            if len(taken) >= limit:
                return list(taken)
            if place < len(members):
                taken.setdefault(members[place])
    return list(taken)
