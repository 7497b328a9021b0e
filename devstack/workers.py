"""The Celery workers of a deployment, as `make run` starts them and docker-compose.yml declares them."""

from __future__ import annotations

from devstack.processes import PYTHON


def worker_commands(*, env: dict[str, str], log_level: str = "info") -> dict[str, tuple[list[str], dict[str, str]]]:
    """The Celery workers of a deployment, by name: (command, environment).

    - `worker`: the default queue (embedding, sweeps, retention) on prefork processes, one per core: CPU-bound work.
    - `formation-worker`: the formation queue (formation and consolidation, which wait on the LLM for seconds per
      call) on a thread pool of FORMATION_WORKER_CONCURRENCY threads (default 100), sharing a pool of
      FORMATION_WORKER_DB_CONNECTIONS database connections (default 8), released while a thread waits on the LLM.
    Both run below the web server for the CPU on the one machine of `make run` (nice 19, and their autogroup's nice
    when WORKER_AUTOGROUP_NICE is set: devstack.background says why), and formation gives way to requests in flight
    (core.runtime.request_load): docs/benchmarks/history.md section 19.
    docs/architecture.md says why; docs/scaling.md how to size them. docker-compose.yml runs the same two."""
    celery = [PYTHON, "-m", "devstack.background", PYTHON, "-m", "celery", "-A", "memory_project", "worker"]
    celery += ["-l", log_level]
    threads = env.get("FORMATION_WORKER_CONCURRENCY", "100")
    connections = env.get("FORMATION_WORKER_DB_CONNECTIONS", "8")
    return {
        "worker": ([*celery, "-Q", "celery", "-n", "worker@%h", "--concurrency", "2"], env),
        "formation-worker": (
            [*celery, "-Q", "formation", "-n", "formation@%h", "--pool", "threads", "--concurrency", threads],
            env | {"DATABASE_POOL_MAX_SIZE": connections},
        ),
    }
