"""gunicorn reads this file from its working directory (the image's /app, the repository here): how the web process
serves memory_project.wsgi (Django, and the MCP server at /mcp), and the bookkeeping of Prometheus's multiprocess
mode (core/observability/metrics.py). The command line (`make run`, docker-compose.yml) adds the address, and may
override any of these.

Threads, not processes, carry concurrency inside a worker: a search spends most of its time in ONNX Runtime and
PostgreSQL, which release the GIL. Each thread keeps its own database connection, as each MCP tool-call thread does:
at most 2 x WEB_THREADS connections per worker (memory_project/settings/base.py)."""

import os as _os
from pathlib import Path as _Path

worker_class = "gthread"
workers = int(_os.environ.get("WEB_WORKERS", "2"))
threads = int(_os.environ.get("WEB_THREADS", "4"))
# A worker that answers nothing for this long is replaced; a stop waits this long for requests in flight.
timeout = 120
graceful_timeout = 30
# Error log only: every request is already logged (with its request id) and counted by the app's middleware.
accesslog = None


def on_starting(server) -> None:
    # With PROMETHEUS_MULTIPROC_DIR set, the master empties the folder before the first worker starts, so that no
    # sample of an earlier run is added to this one's.
    folder = _os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if folder:
        _Path(folder).mkdir(parents=True, exist_ok=True)
        for stale in _Path(folder).glob("*.db"):
            stale.unlink()


def child_exit(server, worker) -> None:
    if _os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        # Imported here: only a master whose workers write metrics needs the client.
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
