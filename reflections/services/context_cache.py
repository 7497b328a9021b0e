"""Cache keys of the always-in-context block. Invalidation bumps a per-scope generation number in the cache, so a
change to an agent's blob invalidates every (agent, user, session) block at once without scanning keys."""

from __future__ import annotations

import logging
from typing import cast

from django.core.cache import cache

logger = logging.getLogger(__name__)

_GENERATION_TIMEOUT = None  # generations never expire; a lost one only causes a cache miss


def _generation_key(kind: str, pk: int) -> str:
    return f"context-gen:{kind}:{pk}"


def _generation(kind: str, pk: int | None) -> int:
    if pk is None:
        return 0
    # Never None: the default is 1 (the stubs type get_or_set's result as Optional whatever the default).
    return cast(int, cache.get_or_set(_generation_key(kind, pk), 1, timeout=_GENERATION_TIMEOUT))


def context_cache_key(*, agent_id: int, user_id: int | None, session_id: int | None) -> str:
    """Changes whenever the agent's, the user's or the session's memory changed since it was last computed."""
    generations = (
        _generation("agent", agent_id),
        _generation("user", user_id),
        _generation("session", session_id),
    )
    # v2: blocks cached before token counts stopped under-counting long words carry counts the bundle cannot trust.
    return f"context:v2:{agent_id}:{user_id}:{session_id}:" + ".".join(map(str, generations))


def context_cache_invalidate(*, agent_id: int, user_id: int | None = None, session_id: int | None = None) -> None:
    """Invalidate the blocks that include the given scope: the narrowest scope given is bumped (an agent-level
    change passes only agent_id, which invalidates every block of that agent)."""
    if session_id is not None:
        kind, pk = "session", session_id
    elif user_id is not None:
        kind, pk = "user", user_id
    else:
        kind, pk = "agent", agent_id
    key = _generation_key(kind, pk)
    try:
        if cache.add(key, 2, timeout=_GENERATION_TIMEOUT):
            return
        try:
            cache.incr(key)
        except ValueError:
            cache.set(key, 2, timeout=_GENERATION_TIMEOUT)
    except Exception:
        # Runs after the write committed: Redis being down must not turn a stored change into an error. Blocks
        # cached before the outage expire (MEMORY_CONTEXT_CACHE_SECONDS) and the beat refresh rebuilds them.
        logger.warning("could not invalidate the context cache for %s %s", kind, pk, exc_info=True)


def context_cache_entries_delete(*, agent_id: int, user_id: int, session_ids: list[int]) -> None:
    """Delete the cached blocks of a user (theirs alone and each of their sessions'), not only make them unreachable:
    an erased user's memory leaves the cache too. Best effort, as every cache write: an unreachable cache holds
    nothing that will be read again once the generations are bumped."""
    keys = [
        context_cache_key(agent_id=agent_id, user_id=user_id, session_id=session_id)
        for session_id in [None, *session_ids]
    ]
    try:
        cache.delete_many(keys)
    except Exception:
        logger.warning("could not delete the cached context blocks of user %s", user_id, exc_info=True)
