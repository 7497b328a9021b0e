"""The memory inspector's read: what an agent would receive for one message (the always-in-context block, the fact
search hits with each signal's rank, the bundle cut to a budget). Reads only: the message is embedded, no LLM is
called and no access is recorded."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agents.models import Agent
from conversations.selectors.memory_scope import MemoryScopeTarget, memory_scope_resolve
from facts.selectors import SearchMode, facts_search
from reflections.selectors.bundle import BundleLimits, MemoryBundle, memory_bundle_build
from reflections.selectors.context import MemoryContext, memory_context_get

INSPECTOR_TOP_K = 10


@dataclass(frozen=True)
class MemoryInspection:
    target: MemoryScopeTarget
    context: MemoryContext
    hits: list[Any]
    bundle: MemoryBundle
    missing: list[str] = field(default_factory=list)  # the user or session named but not stored: shown without it


def memory_inspect(
    *,
    agent: Agent,
    user_external_id: str | None,
    session_external_id: str | None,
    message: str,
    token_budget: int,
    mode: str = SearchMode.HYBRID,
) -> MemoryInspection:
    target = memory_scope_resolve(
        agent=agent, user_external_id=user_external_id, session_external_id=session_external_id
    )
    missing = [
        f"{kind} {name!r}"
        for kind, name, found in (
            ("user", user_external_id, target.user),
            ("session", session_external_id, target.session),
        )
        if name and found is None
    ]
    hits = (
        facts_search(
            agent=agent, user=target.user, query=message, top_k=INSPECTOR_TOP_K, mode=mode, record_access=False
        )
        if agent.rag_enabled
        else []
    )
    return MemoryInspection(
        target=target,
        context=memory_context_get(agent=agent, user=target.user, session=target.session),
        hits=hits,
        bundle=memory_bundle_build(
            agent=agent,
            user=target.user,
            session=target.session,
            query=message,
            token_budget=token_budget,
            limits=BundleLimits(),
            record_access=False,
        ),
        missing=missing,
    )
