import torch
from django.test import override_settings

from core import worker_threads


def test_a_worker_process_limits_the_local_model_threads_once(monkeypatch):
    before = torch.get_num_threads()
    monkeypatch.setattr(worker_threads, "_applied", False)
    try:
        with override_settings(EMBEDDING_PROVIDER="local", EMBEDDING_WORKER_THREADS=1):
            worker_threads.worker_embedding_threads_limit()
        assert torch.get_num_threads() == 1
        torch.set_num_threads(before)
        with override_settings(EMBEDDING_PROVIDER="local", EMBEDDING_WORKER_THREADS=1):
            worker_threads.worker_embedding_threads_limit()  # later tasks leave it alone
        assert torch.get_num_threads() == before
    finally:
        torch.set_num_threads(before)


def test_zero_keeps_torch_default(monkeypatch):
    before = torch.get_num_threads()
    monkeypatch.setattr(worker_threads, "_applied", False)
    with override_settings(EMBEDDING_PROVIDER="local", EMBEDDING_WORKER_THREADS=0):
        worker_threads.worker_embedding_threads_limit()
    assert torch.get_num_threads() == before
