"""Background CPU work gives way to requests: the web processes say when they serve a request, and a gate in each
worker process admits fewer CPU-heavy sections of background work (formation's claim, planning and writes between
its LLM calls) while any web process is busy.

The web side costs a request a lock and two counter updates (RequestLoadMiddleware): each web process counts its
requests in flight, and a thread of its own writes to Redis, when the process turns busy and then every
REQUEST_LOAD_LINGER_SECONDS / 3 while it stays busy, that the process is busy until now + the linger (a sorted set,
member = host:pid, score = that time in ms). Nothing is written when it turns idle: its mark expires within the
linger, the same way as a process that died mid-request, so no count leaks.

The worker side (cpu_work_admitted): at most FORMATION_GATE_SLOTS_BUSY sections at once in this process while a web
process is marked busy, none limited otherwise. The load is read from Redis at most every 20 ms per process; a
section waits at most FORMATION_GATE_MAX_WAIT_SECONDS and then runs anyway, so that a web tier that is never idle
slows background work without stopping it, and nothing can deadlock on the gate. A section gives its slot back while
it waits on the network (cpu_work_paused: the LLM client around each provider call and rate-limit wait), so that a
slot is held for CPU work only. Redis unreachable: nothing is limited. docs/architecture.md, "Background work gives
way to requests"."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import redis
from django.conf import settings
from django.http import HttpRequest, HttpResponse

from core.runtime.db import release_connection_while_waiting

logger = logging.getLogger(__name__)

REQUEST_LOAD_KEY = "memory:request-load"
_LOAD_READ_EVERY_SECONDS = 0.02
_PRUNE_AFTER_MS = 60_000


def _redis_client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=0.5, socket_connect_timeout=0.5)


class _WebProcessLoad:
    """This web process's requests in flight, and the thread that publishes them. Made again after a fork (the
    thread and the Redis connection belong to the process that made them)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.member = f"{socket.gethostname()}:{self.pid}"
        self.lock = threading.Lock()
        self.in_flight = 0
        self.busy = threading.Event()
        self.client: redis.Redis | None = None
        self.thread = threading.Thread(target=self._publish_loop, name="request-load", daemon=True)
        self.thread.start()

    def enter(self) -> None:
        with self.lock:
            self.in_flight += 1
            if self.in_flight == 1:
                self.busy.set()

    def leave(self) -> None:
        with self.lock:
            self.in_flight -= 1

    def _still_busy(self) -> bool:
        with self.lock:
            if self.in_flight > 0:
                return True
            self.busy.clear()  # under the lock: the next request's enter() sets it again
            return False

    def _publish_loop(self) -> None:
        while True:
            self.busy.wait()
            linger = settings.REQUEST_LOAD_LINGER_SECONDS
            while self._still_busy():
                self._publish(until_ms=int(1000 * (time.time() + linger)))
                time.sleep(linger / 3)

    def _publish(self, *, until_ms: int) -> None:
        try:
            if self.client is None:
                self.client = _redis_client()
            self.client.zadd(REQUEST_LOAD_KEY, {self.member: until_ms})
        except Exception:
            logger.warning("request load: Redis is unreachable; background work is not held back", exc_info=True)


_web_load: _WebProcessLoad | None = None
_web_load_lock = threading.Lock()


def _process_load() -> _WebProcessLoad:
    global _web_load
    load = _web_load
    if load is None or load.pid != os.getpid():
        with _web_load_lock:
            if _web_load is None or _web_load.pid != os.getpid():
                _web_load = _WebProcessLoad()
            load = _web_load
    return load


class RequestLoadMiddleware:
    """First in MIDDLEWARE: a request counts from the moment Django has it until its response is made, errors
    included (the finally)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        # Marks are written only for a gate that reads them (FORMATION_GATE_SLOTS_BUSY, off by default).
        self.enabled = settings.REQUEST_LOAD_LINGER_SECONDS > 0 and settings.FORMATION_GATE_SLOTS_BUSY > 0

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not self.enabled:
            return self.get_response(request)
        load = _process_load()
        load.enter()
        try:
            return self.get_response(request)
        finally:
            load.leave()


def web_processes_busy(*, client: redis.Redis | None = None) -> int:
    """How many web processes are marked busy now (0 when Redis cannot be read). Marks older than a minute are
    pruned on the way."""
    now_ms = int(1000 * time.time())
    try:
        pipe = (client or _redis_client()).pipeline(transaction=False)
        pipe.zcount(REQUEST_LOAD_KEY, now_ms, "+inf")
        pipe.zremrangebyscore(REQUEST_LOAD_KEY, "-inf", now_ms - _PRUNE_AFTER_MS)
        busy, _ = pipe.execute()
    except Exception:
        logger.warning("request load: Redis is unreachable; background work is not held back", exc_info=True)
        return 0
    return int(busy)


class _Gate:
    """The slots of one worker process, shared by its threads."""

    def __init__(self) -> None:
        self.condition = threading.Condition()
        self.held = 0
        self.client: redis.Redis | None = None
        self.busy = 0
        self.read_at = float("-inf")
        self.read_lock = threading.Lock()

    def _web_busy(self) -> int:
        """The web's load, read by one thread at a time at most every _LOAD_READ_EVERY_SECONDS."""
        if time.monotonic() - self.read_at >= _LOAD_READ_EVERY_SECONDS and self.read_lock.acquire(blocking=False):
            try:
                if self.client is None:
                    self.client = _redis_client()
                self.busy, self.read_at = web_processes_busy(client=self.client), time.monotonic()
            finally:
                self.read_lock.release()
        return self.busy

    def acquire(self) -> bool:
        """Take a slot; False when the wait ran out (the slot is taken anyway)."""
        slots = settings.FORMATION_GATE_SLOTS_BUSY
        deadline = time.monotonic() + settings.FORMATION_GATE_MAX_WAIT_SECONDS
        while True:
            busy = self._web_busy() if slots > 0 else 0
            with self.condition:
                if busy == 0 or self.held < slots:
                    self.held += 1
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self.held += 1
                    return False
            # Not holding a pooled database connection while waiting: the section that has the slot may need it.
            release_connection_while_waiting()
            with self.condition:
                self.condition.wait(min(remaining, _LOAD_READ_EVERY_SECONDS))

    def release(self) -> None:
        with self.condition:
            self.held -= 1
            self.condition.notify()


_gate = _Gate()
_holding: ContextVar[bool] = ContextVar("cpu_work_slot_held", default=False)


@contextmanager
def cpu_work_admitted() -> Iterator[None]:
    """Around a background job's CPU work: a slot of this process's gate, given back while it waits on the network
    (cpu_work_paused). Nested use keeps the one slot."""
    if _holding.get():
        yield
        return
    if not _gate.acquire():
        logger.debug("request load: a section ran after waiting FORMATION_GATE_MAX_WAIT_SECONDS for a slot")
    token = _holding.set(True)
    try:
        yield
    finally:
        _holding.reset(token)
        _gate.release()


@contextmanager
def cpu_work_paused() -> Iterator[None]:
    """Around a wait on the network inside cpu_work_admitted (an LLM call, a rate-limit sleep): the slot is given
    back meanwhile and taken again after. Outside the gate, nothing."""
    if not _holding.get():
        yield
        return
    _gate.release()
    _holding.set(False)
    try:
        yield
    finally:
        if not _gate.acquire():
            logger.debug("request load: a section ran after waiting FORMATION_GATE_MAX_WAIT_SECONDS for a slot")
        _holding.set(True)
