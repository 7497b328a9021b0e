"""How many threads the local embedding model may use inside a Celery worker process.

A worker scales by processes (--concurrency, one per core by default) or, for formation, by threads, and a model
runtime gives each process one intra-op thread per core by default: N processes then run N x N spinning threads on N
cores. Measured on a 2-core machine under other load (with torch, before ONNX Runtime replaced it), embedding a
formation's two facts took ~1,100 ms (p50) with 2 threads and ~120 ms with one. A single-process worker
(--concurrency 1, --pool solo) keeps every core: one thread there would roughly halve the embedding of a large
import's messages. So by default each process (or pool thread) gets cores / processes threads (at least one);
EMBEDDING_WORKER_THREADS fixes the number instead. Limited in the process that runs the tasks (before its first task),
so it holds for every pool type."""

from __future__ import annotations

import logging
import os
from typing import Any

from celery.concurrency.prefork import TaskPool as PreforkPool
from celery.concurrency.thread import TaskPool as ThreadPool
from django.conf import settings

logger = logging.getLogger(__name__)
_applied = False
_worker_processes: int | None = None


def worker_processes_record(instance: object = None, **_: Any) -> None:
    """celery `celeryd_after_setup`, in the main process once the concurrency is resolved and before the pool forks:
    how many processes (or pool threads) will run tasks at once."""
    global _worker_processes

    pool = getattr(instance, "pool_cls", None)
    concurrency = getattr(instance, "concurrency", 1)
    # Prefork processes and pool threads embed side by side (a thread-pool worker's threads each run the model at
    # once, ONNX Runtime releasing the GIL): one intra-op thread each. A solo worker embeds one batch at a time:
    # every core.
    if not (isinstance(pool, type) and issubclass(pool, PreforkPool | ThreadPool)):
        concurrency = 1
    _worker_processes = max(1, concurrency if isinstance(concurrency, int) else 1)


def worker_embedding_threads(*, configured: int, processes: int | None, cores: int) -> int | None:
    """The thread count for each worker process, or None to leave the runtime's default (not known to be a worker)."""
    if configured > 0:
        return configured
    if processes is None:
        return None
    return max(1, cores // processes)


def worker_embedding_threads_limit(**_: Any) -> None:
    global _applied
    if _applied:
        return
    _applied = True
    if settings.EMBEDDING_PROVIDER != "local":
        return
    threads = worker_embedding_threads(
        configured=settings.EMBEDDING_WORKER_THREADS,
        processes=_worker_processes,
        cores=len(os.sched_getaffinity(0)),
    )
    if threads is None:
        return
    # Imported when a task starts: this module loads with the Celery app, before Django's apps are ready.
    from core.embeddings.providers import get_embedding_provider

    get_embedding_provider().threads_set(threads)
    logger.debug("embedding model limited to %d thread(s) in this worker process", threads)
