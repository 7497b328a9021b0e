"""A question that names the user ("Where does Dana work now?", "Who was Dana's boss?") is a question about the user,
and the facts that answer it say "the user", never "Dana": only the fact that gives the name carries it, so searched as
written the name finds that fact first. Such a question is read as the user would ask it ("Where do I work now?"), and
the first-person rewrite (facts.selectors.first_person) takes it from there.

A word of the question is the user's name when one of the user's current facts says so ("The user's name is Dana.",
"The user is Dana, a data analyst ..."): one indexed read of the user's facts, made only when the question holds a
capitalised word that could be a name."""

from __future__ import annotations

import re

from agents.models import EndUser
from facts.models import Fact

# A capitalised word of two letters or more ("I" is not one) that does not open the question or a sentence of it.
_CAPITALISED = re.compile(r"(?<!^)(?<![.?!]\s)\b([A-Z\u00c0-\u00de][\w\u00c0-\u024f-]+)")
_MAX_NAMES = 4


def user_names_as_first_person(*, query: str, user: EndUser) -> str | None:
    """The question with the user's name read as "I" ("Dana's" as "my"), or None when it names no user."""
    words = list(dict.fromkeys(_CAPITALISED.findall(query.strip())))
    if not words:
        return None
    names = _user_names_among(words=words[:_MAX_NAMES], user=user)
    if not names:
        return None
    rewritten = query
    for name in names:
        rewritten = re.sub(rf"\b{re.escape(name)}(?:'s|’s)(?!\w)", "my", rewritten)
        rewritten = re.sub(rf"\b{re.escape(name)}\b", "I", rewritten)
    return rewritten


def _user_names_among(*, words: list[str], user: EndUser) -> list[str]:
    """Those of `words` a current fact of the user gives as the user's name."""
    alternatives = "|".join(re.escape(word) for word in words)
    statement = rf"^the user(?:'s name)? is (?:called |named )?({alternatives})\M"
    said = Fact.objects.filter(
        agent_id=user.agent_id, user=user, valid_to__isnull=True, content__iregex=statement
    ).values_list("content", flat=True)[:_MAX_NAMES]
    named = {
        match.group(1).lower()
        for content in said
        if (match := re.match(rf"the user(?:'s name)? is (?:called |named )?({alternatives})\b", content, re.I))
    }
    return [word for word in words if word.lower() in named]
