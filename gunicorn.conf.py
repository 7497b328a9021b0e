"""gunicorn reads this file from its working directory (the image's /app, the repository here): the bookkeeping of
Prometheus's multiprocess mode (core/observability/metrics.py). Every other setting comes from the command line
(docker-compose.yml). With PROMETHEUS_MULTIPROC_DIR set, the master empties the folder before the first worker
starts, so that no sample of an earlier run is added to this one's."""

import os as _os
from pathlib import Path as _Path


def on_starting(server) -> None:
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
