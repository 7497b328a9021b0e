"""How many threads the local embedding model may use inside a Celery worker process.

A worker scales by processes (--concurrency, one per core by default), and torch gives each process one
intra-op thread per core: N processes then run N x N spinning threads on N cores. Measured on a 2-core machine
under other load, embedding a formation's two facts took ~1,100 ms (p50) with torch's 2 threads and ~120 ms with
one. Limited in the process that runs the tasks (before its first task), so it holds for every pool type."""

from __future__ import annotations

import logging

logger = logging.getLogger(__name__)
_applied = False


def worker_embedding_threads_limit(**_) -> None:
    global _applied
    if _applied:
        return
    _applied = True
    from django.conf import settings

    threads = settings.EMBEDDING_WORKER_THREADS
    if settings.EMBEDDING_PROVIDER != "local" or threads <= 0:
        return
    import torch

    torch.set_num_threads(threads)
    logger.debug("embedding model limited to %d thread(s) in this worker process", threads)
