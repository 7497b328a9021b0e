"""Per-process caches of the rows every API request reads but that rarely change: the API key with its agent, the end
user an external id names, the active embedding space. Each saves a SQL statement per request (docs/architecture.md,
"Per-process caches on the request path").

Every process (web workers, Celery workers) keeps its own copies, so a change made in one process must reach all
the others before their next request: one shared generation in Redis, replaced by every write to a cached kind of
row (after commit, and once already before it so that the writing transaction's own reads see the change), and read
once per request (pinned by RequestPathGenerationMiddleware; outside a request, once per lookup). An entry is used
only under the generation it was stored with, so the next request after a revoke, in any process, reads the row
again. While Redis is unreachable nothing is cached (every lookup reads the database): a key revoked then must
still be refused. Entries also expire after REQUEST_PATH_CACHE_SECONDS, a bound on staleness should a bump fail;
0 turns the caches off."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Generic, TypeVar, overload

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.http import HttpRequest, HttpResponse

logger = logging.getLogger(__name__)

Value = TypeVar("Value")

_GENERATION_KEY = "request-path-generation"
# The generation read for the current request ({} until its first lookup); None outside a request.
_request_generation: ContextVar[dict[str, str | None] | None] = ContextVar("request_path_generation", default=None)


def _generation_read() -> str | None:
    """The shared generation, created when missing (a fresh or flushed Redis: no entry of any process matches a new
    random one); None when Redis cannot be read."""
    try:
        generation = cache.get(_GENERATION_KEY)
        if generation is None:
            cache.add(_GENERATION_KEY, uuid.uuid4().hex, timeout=None)
            generation = cache.get(_GENERATION_KEY)
        return generation
    except Exception:
        logger.warning("request path caches: the cache is unreachable; reading from the database")
        return None


def request_path_generation() -> str | None:
    pinned = _request_generation.get()
    if pinned is None:
        return _generation_read()
    if "generation" not in pinned:
        pinned["generation"] = _generation_read()
    return pinned["generation"]


@contextmanager
def request_path_generation_pinned() -> Iterator[None]:
    """Within the block, the generation is read from Redis at most once (at the first lookup)."""
    token = _request_generation.set({})
    try:
        yield
    finally:
        _request_generation.reset(token)


def _generation_replace() -> None:
    try:
        cache.set(_GENERATION_KEY, uuid.uuid4().hex, timeout=None)
    except Exception:
        # The write stands; entries elsewhere expire within REQUEST_PATH_CACHE_SECONDS.
        logger.warning("request path caches: could not invalidate (the cache is unreachable)", exc_info=True)


def request_path_caches_invalidate(*, using: str | None = None) -> None:
    """Called by whatever writes a cached kind of row, inside its transaction. Replaced now, so that the writer's own
    later reads in this transaction miss, and again after commit, because a process that read the old row between
    the two stored it under the first new generation."""
    _generation_replace()
    transaction.on_commit(_generation_replace, using=using)


class ProcessCache(Generic[Value]):
    """A bounded, least-recently-used map of this process, valid under one shared generation. Only found rows are
    kept (a miss is read again next time: the row may be created in between). Values are shared between threads:
    callers hand out copies of what they may change."""

    def __init__(self, *, max_entries: int) -> None:
        self._max_entries = max_entries
        self._entries: OrderedDict[Hashable, tuple[Value, str, float]] = OrderedDict()
        self._lock = threading.Lock()

    @overload
    def get_or_load(self, *, key: Hashable, load: Callable[[], Value]) -> Value: ...

    @overload
    def get_or_load(self, *, key: Hashable, load: Callable[[], Value | None]) -> Value | None: ...

    def get_or_load(self, *, key: Hashable, load: Callable[[], Value | None]) -> Value | None:
        ttl = settings.REQUEST_PATH_CACHE_SECONDS
        generation = request_path_generation() if ttl > 0 else None
        if generation is None:
            return load()
        now = time.monotonic()
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                value, stored_generation, expires_at = entry
                if stored_generation == generation and now < expires_at:
                    self._entries.move_to_end(key)
                    return value
                del self._entries[key]
        # Stored under the generation read before the row: a write committed in between has replaced it since.
        loaded = load()
        if loaded is not None:
            with self._lock:
                self._entries[key] = (loaded, generation, now + ttl)
                self._entries.move_to_end(key)
                while len(self._entries) > self._max_entries:
                    self._entries.popitem(last=False)
        return loaded

    def replace(self, *, key: Hashable, value: Value) -> None:
        """Keep a newer copy of an entry this process itself changed, under the entry's generation."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries[key] = (value, entry[1], entry[2])


class RequestPathGenerationMiddleware:
    """One Redis read of the generation per request, however many cached lookups the request makes."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with request_path_generation_pinned():
            return self.get_response(request)
