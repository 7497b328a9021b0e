from django.test import override_settings

from core.embeddings.providers import get_embedding_provider
from core.runtime import worker_threads
from core.runtime.worker_threads import worker_embedding_threads


def test_each_worker_process_gets_its_share_of_the_cores():
    assert worker_embedding_threads(configured=0, processes=2, cores=2) == 1
    assert worker_embedding_threads(configured=0, processes=4, cores=2) == 1
    assert worker_embedding_threads(configured=0, processes=1, cores=2) == 2  # --pool solo keeps every core
    assert worker_embedding_threads(configured=0, processes=2, cores=8) == 4
    assert worker_embedding_threads(configured=3, processes=2, cores=2) == 3  # fixed by the setting
    assert worker_embedding_threads(configured=0, processes=None, cores=2) is None  # not a worker: runtime default


def test_a_worker_process_limits_the_local_model_threads_once(monkeypatch):
    provider = get_embedding_provider()
    before = provider._threads
    monkeypatch.setattr(worker_threads, "_applied", False)
    try:
        with override_settings(EMBEDDING_PROVIDER="local", EMBEDDING_WORKER_THREADS=1):
            worker_threads.worker_embedding_threads_limit()
        assert provider._threads == 1
        assert provider.embed_one("still embeds").shape == (384,)  # the session is rebuilt with one thread
        provider.threads_set(before)
        with override_settings(EMBEDDING_PROVIDER="local", EMBEDDING_WORKER_THREADS=1):
            worker_threads.worker_embedding_threads_limit()  # later tasks leave it alone
        assert provider._threads == before
    finally:
        provider.threads_set(before)


def test_the_worker_concurrency_sets_the_default(monkeypatch):
    from celery.concurrency.prefork import TaskPool as PreforkPool

    class Worker:
        concurrency = 2
        pool_cls = PreforkPool

    provider = get_embedding_provider()
    before = provider._threads
    monkeypatch.setattr(worker_threads, "_applied", False)
    monkeypatch.setattr(worker_threads, "_worker_processes", None)
    monkeypatch.setattr(worker_threads.os, "sched_getaffinity", lambda pid: {0, 1})
    try:
        worker_threads.worker_processes_record(sender="celery@host", instance=Worker())
        with override_settings(EMBEDDING_PROVIDER="local", EMBEDDING_WORKER_THREADS=0):
            worker_threads.worker_embedding_threads_limit()
        assert provider._threads == 1
    finally:
        provider.threads_set(before)


def test_a_solo_worker_keeps_every_core(monkeypatch):
    from celery.concurrency.solo import TaskPool as SoloPool

    class Worker:
        concurrency = 2  # celery's default even for --pool solo
        pool_cls = SoloPool

    monkeypatch.setattr(worker_threads, "_worker_processes", None)
    worker_threads.worker_processes_record(sender="celery@host", instance=Worker())
    assert worker_threads._worker_processes == 1


def test_a_thread_pool_worker_gives_each_of_its_threads_one_model_thread(monkeypatch):
    """The formation worker's threads embed side by side, like prefork processes do."""
    from celery.concurrency.thread import TaskPool as ThreadPool

    class Worker:
        concurrency = 100
        pool_cls = ThreadPool

    monkeypatch.setattr(worker_threads, "_worker_processes", None)
    worker_threads.worker_processes_record(sender="formation@host", instance=Worker())

    assert worker_threads._worker_processes == 100
    assert worker_embedding_threads(configured=0, processes=100, cores=2) == 1
