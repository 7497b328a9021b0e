"""The memory bundle: everything memory offers for one prompt, cut to the caller's token budget.

Parts, in the order they are given budget (the first ones are what an agent can least do without):
0. `notice`: the standing notice that memory is quoted data, not instructions (core.safety.fencing), first in the text
   whenever other memory is given and the context block (which carries it) is not; a caller may turn it off with a
   part limit of 0;
1. `context`: the always-in-context block (atomic: an XML-like block cut in the middle would mislead the model);
2. `session_summary`: the session's consolidated blob, only when the context block is not in the bundle (it holds
   the same text as <SessionMemory>);
3. `recent_turns`: the session's last turns, newest first, contiguous (a turn that does not fit is shortened and
   the older ones left out, never a gap in the conversation);
4. `facts`: hybrid fact search (facts.selectors.facts_search) for the query;
5. `similar_messages`: past messages similar to the query (turn-level retrieval), excluding the recent turns.

Each part is capped by its own token limit and by what the parts before it left of the budget, checked on the part's
rendered text. Token counts are those of core.llm.tokens, which never count less than a text's size warrants (a long
"word" costs a token per character); parts begin and end with a tag and are joined by a blank line, which costs
nothing, so the rendered `text` costs the sum of the parts."""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agents.models import Agent, EndUser
from conversations.models import Message, Session
from conversations.selectors.message_screening import messages_screen_for_reading
from conversations.selectors.message_search import MessageHit, messages_search_similar
from core.llm.tokens import count_tokens
from core.safety.fencing import MEMORY_NOTICE_BLOCK, memory_text_quote
from facts.selectors import FactHit, facts_search
from reflections.models import ConsolidatedMemory, MemoryScope
from reflections.selectors.context import MemoryContext, memory_context_get

BUNDLE_PART_NAMES = ("notice", "context", "session_summary", "recent_turns", "facts", "similar_messages")
DEFAULT_PART_TOKEN_LIMITS = {
    "notice": 60,
    "context": 2500,
    "session_summary": 600,
    "recent_turns": 1500,
    "facts": 800,
    "similar_messages": 600,
}
# Below this many tokens of room, a shortened item says too little to be worth its place.
MIN_SHORTENED_ITEM_TOKENS = 16
SIMILAR_MESSAGE_MAX_TOKENS = 150
ELLIPSIS = " …"
# Longer than any real word (WordPiece gives up at 100 characters): shortening may cut inside it.
LONG_WORD_CHARS = 100


class PartStatus:
    INCLUDED = "included"
    PARTIAL = "partial"  # some items left out or shortened
    OVER_BUDGET = "over_budget"  # there was memory, none of it fitted
    EMPTY = "empty"  # no memory of this kind
    DISABLED = "disabled"  # switched off for the agent
    IN_CONTEXT = "in_context"  # already inside the context part


@dataclass(frozen=True)
class BundleLimits:
    facts_top_k: int = 10
    similar_messages_top_k: int = 5
    similar_messages_min_similarity: float | None = 0.3
    recent_turns: int = 10
    part_token_limits: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_PART_TOKEN_LIMITS))

    def token_limit(self, part: str) -> int:
        return self.part_token_limits.get(part, DEFAULT_PART_TOKEN_LIMITS[part])


@dataclass
class BundlePart:
    name: str
    status: str
    token_limit: int
    tokens: int = 0
    text: str = ""
    items: list[dict[str, Any]] = field(default_factory=list)
    omitted: int = 0


@dataclass(frozen=True)
class MemoryBundle:
    query: str
    token_budget: int
    tokens_used: int
    text: str
    parts: dict[str, BundlePart]


def _longest_fitting_prefix(*, length: int, fits: Callable[[int], bool]) -> int:
    """The largest n in [0, length) with fits(n) by bisection; 0 when none is found. Every n returned was checked,
    so the answer fits even where the count is not monotonic in n."""
    fitting, too_many = 0, length
    while too_many - fitting > 1:
        middle = (fitting + too_many) // 2
        if fits(middle):
            fitting = middle
        else:
            too_many = middle
    return fitting


def text_shorten_to_tokens(*, text: str, max_tokens: int) -> str:
    """The longest prefix of whole words, plus an ellipsis, within max_tokens; "" if not even one word fits. A "word"
    too long to fit whole (longer than LONG_WORD_CHARS: a pasted blob, not a word) is cut inside instead."""
    if count_tokens(text) <= max_tokens:
        return text
    words = text.split(" ")
    fitting = _longest_fitting_prefix(
        length=len(words), fits=lambda n: count_tokens(" ".join(words[:n]) + ELLIPSIS) <= max_tokens
    )
    kept = words[:fitting]
    if fitting < len(words) and len(words[fitting]) > LONG_WORD_CHARS:
        long_word = words[fitting]
        characters = _longest_fitting_prefix(
            length=len(long_word),
            fits=lambda n: count_tokens(" ".join([*kept, long_word[:n]]) + ELLIPSIS) <= max_tokens,
        )
        if characters:
            kept.append(long_word[:characters])
    return " ".join(kept) + ELLIPSIS if kept else ""


@dataclass(frozen=True)
class _Line:
    text: str
    item: dict[str, Any]


def _wrap(tag: str, lines: list[str]) -> str:
    return "\n".join([f"<{tag}>", *lines, f"</{tag}>"])


def _wrapper_tokens(tag: str) -> int:
    return count_tokens(f"<{tag}>") + count_tokens(f"</{tag}>")


def _part_fill(
    *,
    part: BundlePart,
    tag: str,
    lines: list[_Line],
    allowance: int,
    contiguous: bool,
    item_content: Callable[[str], str] | None = None,
) -> None:
    """Take lines in order while they fit. Contiguous parts stop at the first line that does not fit (shortened to
    fit when there is room enough); the others skip it and try the next. `item_content` re-derives an item's
    `content` from its shortened line."""
    if not lines:
        part.status = PartStatus.EMPTY
        return
    remaining = allowance - _wrapper_tokens(tag)
    taken: list[_Line] = []
    shortened = False
    for line in lines:
        cost = count_tokens(line.text)
        if cost <= remaining:
            taken.append(line)
            remaining -= cost
            continue
        if contiguous:
            if remaining >= MIN_SHORTENED_ITEM_TOKENS:
                cut = text_shorten_to_tokens(text=line.text, max_tokens=remaining)
                if cut and item_content is not None:
                    taken.append(_Line(cut, {**line.item, "content": item_content(cut), "truncated": True}))
                    shortened = True
            break
    if contiguous:
        taken.reverse()  # newest first while choosing, oldest first to read
    # Lines were costed one by one; whitespace where they meet can cost more once joined. Drop lines (the oldest of
    # contiguous ones, the last chosen of the others) until the rendered part fits.
    while taken and count_tokens(_wrap(tag, [line.text for line in taken])) > allowance:
        taken.pop(0 if contiguous else -1)
    if not taken:
        part.status, part.omitted = PartStatus.OVER_BUDGET, len(lines)
        return
    part.text = _wrap(tag, [line.text for line in taken])
    part.tokens = count_tokens(part.text)
    part.items = [line.item for line in taken]
    part.omitted = len(lines) - len(taken)
    part.status = PartStatus.PARTIAL if part.omitted or shortened else PartStatus.INCLUDED


def _turn_line(message: Message) -> _Line:
    return _Line(
        f"{message.role}: {memory_text_quote(message.content)}",
        {
            "id": message.pk,
            "role": message.role,
            "content": message.content,
            "created_at": message.created_at.isoformat(),
            "truncated": False,
        },
    )


@dataclass
class _Budget:
    """What is left of the caller's budget, and what one part may take of it."""

    remaining: int
    parts: dict[str, BundlePart]

    def allowance(self, name: str) -> int:
        return min(self.parts[name].token_limit, self.remaining)

    def spend(self, part: BundlePart) -> None:
        self.remaining -= part.tokens


def _context_part_fill(*, part: BundlePart, context: MemoryContext, budget: _Budget) -> None:
    if not context.enabled:
        part.status = PartStatus.DISABLED
    elif context.text and context.token_count <= budget.allowance("context"):
        part.status, part.text, part.tokens = PartStatus.INCLUDED, context.text, context.token_count
    elif context.text:
        part.status = PartStatus.OVER_BUDGET


def _notice_part_fill(*, part: BundlePart, context_included: bool, budget: _Budget) -> None:
    """The notice goes first whenever memory follows without the context block, which carries it itself."""
    if context_included:
        part.status = PartStatus.IN_CONTEXT
    elif budget.allowance("notice") >= count_tokens(MEMORY_NOTICE_BLOCK):
        part.text, part.tokens = MEMORY_NOTICE_BLOCK, count_tokens(MEMORY_NOTICE_BLOCK)
        part.status = PartStatus.INCLUDED  # given back at the end if no memory follows it
    elif part.token_limit > 0:
        budget.remaining = 0  # memory is never handed over without its notice: nothing else fits
        part.status = PartStatus.OVER_BUDGET
    else:
        part.status = PartStatus.DISABLED  # the caller turned it off


def _session_summary_part_fill(
    *,
    part: BundlePart,
    agent: Agent,
    session: Session | None,
    context: MemoryContext,
    context_included: bool,
    budget: _Budget,
) -> None:
    if session is None:
        return
    if context_included and context.blob_of(MemoryScope.SESSION):
        part.status = PartStatus.IN_CONTEXT
        return
    session_blob = memory_text_quote(
        (
            ConsolidatedMemory.objects.filter(agent=agent, scope=MemoryScope.SESSION, session=session)
            .values_list("content", flat=True)
            .first()
            or ""
        ).strip()
    )
    if not session_blob:
        return
    room = budget.allowance("session_summary") - _wrapper_tokens("SessionSummary")
    summary = text_shorten_to_tokens(text=session_blob, max_tokens=room) if room >= MIN_SHORTENED_ITEM_TOKENS else ""
    wrapped = _wrap("SessionSummary", [summary])
    if summary and count_tokens(wrapped) <= budget.allowance("session_summary"):
        part.text, part.tokens = wrapped, count_tokens(wrapped)
        part.status = PartStatus.INCLUDED if summary == session_blob else PartStatus.PARTIAL
    else:
        part.status = PartStatus.OVER_BUDGET


def _fact_line(hit: FactHit) -> _Line:
    return _Line(
        f"- {memory_text_quote(hit.fact.content)}",
        {
            "id": hit.fact.pk,
            "content": hit.fact.content,
            "scopes": list(hit.fact.scopes),
            "score": hit.score,
            "similarity": hit.similarity,
            "vector_rank": hit.vector_rank,
            "text_rank": hit.text_rank,
        },
    )


def _similar_message_line(hit: MessageHit) -> _Line:
    content = text_shorten_to_tokens(text=hit.message.content, max_tokens=SIMILAR_MESSAGE_MAX_TOKENS)
    return _Line(
        f"- [{hit.message.created_at:%Y-%m-%d}] {hit.message.role}: {memory_text_quote(content)}",
        {
            "id": hit.message.pk,
            "role": hit.message.role,
            "content": content,
            "session": hit.session_external_id,
            "similarity": hit.similarity,
            "created_at": hit.message.created_at.isoformat(),
            "truncated": content != hit.message.content,
        },
    )


def memory_bundle_build(
    *,
    agent: Agent,
    user: EndUser | None,
    session: Session | None,
    query: str,
    token_budget: int,
    limits: BundleLimits | None = None,
    min_similarity: float | None = None,
    recency_weight: float = 0.0,
    record_access: bool = True,
) -> MemoryBundle:
    """The parts in the order they get budget (the module docstring), each step taking what it fits."""
    limits = limits or BundleLimits()
    parts = {
        name: BundlePart(name=name, status=PartStatus.EMPTY, token_limit=limits.token_limit(name))
        for name in BUNDLE_PART_NAMES
    }
    budget = _Budget(remaining=token_budget, parts=parts)

    context = memory_context_get(agent=agent, user=user, session=session)
    _context_part_fill(part=parts["context"], context=context, budget=budget)
    budget.spend(parts["context"])
    context_included = parts["context"].status == PartStatus.INCLUDED
    _notice_part_fill(part=parts["notice"], context_included=context_included, budget=budget)
    budget.spend(parts["notice"])
    _session_summary_part_fill(
        part=parts["session_summary"],
        agent=agent,
        session=session,
        context=context,
        context_included=context_included,
        budget=budget,
    )
    budget.spend(parts["session_summary"])

    recent: list[Message] = []
    if session is not None and limits.recent_turns > 0:
        recent = list(Message.objects.filter(session=session).order_by("-id")[: limits.recent_turns])
        messages_screen_for_reading(agent=agent, messages=recent)
    _part_fill(
        part=parts["recent_turns"],
        tag="RecentTurns",
        lines=[_turn_line(message) for message in recent],
        allowance=budget.allowance("recent_turns"),
        contiguous=True,
        item_content=lambda line: html.unescape(line.split(": ", 1)[1]),
    )
    budget.spend(parts["recent_turns"])

    if not agent.rag_enabled:
        parts["facts"].status = PartStatus.DISABLED
    else:
        hits = (
            facts_search(
                agent=agent,
                user=user,
                query=query,
                top_k=limits.facts_top_k,
                min_similarity=min_similarity,
                recency_weight=recency_weight,
                record_access=record_access,
            )
            if limits.facts_top_k > 0
            else []
        )
        _part_fill(
            part=parts["facts"],
            tag="RelevantFacts",
            lines=[_fact_line(hit) for hit in hits],
            allowance=budget.allowance("facts"),
            contiguous=False,
        )
    budget.spend(parts["facts"])

    similar = messages_search_similar(
        agent=agent,
        user=user,
        session=session,
        query=query,
        top_k=limits.similar_messages_top_k,
        min_similarity=limits.similar_messages_min_similarity,
        exclude_message_ids=[message.pk for message in recent],
    )
    _part_fill(
        part=parts["similar_messages"],
        tag="SimilarPastMessages",
        lines=[_similar_message_line(hit) for hit in similar],
        allowance=budget.allowance("similar_messages"),
        contiguous=False,
    )

    notice = parts["notice"]
    if notice.text and not any(part.text for name, part in parts.items() if name != "notice"):
        notice.text, notice.tokens, notice.status = "", 0, PartStatus.EMPTY
    return MemoryBundle(
        query=query,
        token_budget=token_budget,
        tokens_used=sum(part.tokens for part in parts.values()),
        text="\n\n".join(part.text for part in parts.values() if part.text),
        parts=parts,
    )
