"""Measure the long-running management commands on a throwaway embedded stack, the way an operator runs them:

    .venv/bin/python -m benchmarks.measure_management_commands [path/to/locomo10.json]

1. `import_memories --format locomo` of the whole LoCoMo file (turns as messages, observations as facts with their
   vectors, session summaries as blobs), then the time until one Celery worker has embedded every message (the
   import queues that work, as ingestion does), then the same import again (idempotent: adds nothing);
2. `reembed` of everything it stored into a second space of the local model (same compute as a real model change).

Prints wall-clock times (each includes the command's start-up: Django, torch and the model), the load average
(other work on the machine slows every figure) and the commands' own reports. Every server and worker it starts
it stops; the data folder is deleted."""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from devstack.services import backing_services

REPO_DIR = Path(__file__).resolve().parent.parent

DEFAULT_LOCOMO = REPO_DIR.parent / "shared" / "benchmarks" / "locomo" / "locomo10.json"


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_manage(*args: str, env: dict[str, str]) -> tuple[str, str]:
    """The command's report, and its wall-clock and CPU time (CPU time is what an idle machine would need at most;
    on a busy one the wall clock mostly measures the other work)."""
    started, cpu_before = time.monotonic(), children_cpu_seconds()
    completed = subprocess.run(
        [sys.executable, str(REPO_DIR / "manage.py"), *args],
        env=env,
        cwd=REPO_DIR,
        check=True,
        capture_output=True,
        text=True,
    )
    seconds, cpu = time.monotonic() - started, children_cpu_seconds() - cpu_before
    return f"{seconds:.1f}s wall clock, {cpu:.1f}s CPU ({load()})", completed.stdout


def embedded_messages(database_url: str) -> int:
    import psycopg

    with psycopg.connect(database_url.replace("postgres://", "postgresql://")) as connection:
        return connection.execute("SELECT count(*) FROM conversations_messageembedding").fetchone()[0]


def wait_for_worker_embeddings(*, env: dict[str, str], expected: int) -> str:
    started, cpu_before = time.monotonic(), children_cpu_seconds()
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "memory_project", "worker", "--pool", "solo", "-l", "error"],
        env=env,
        cwd=REPO_DIR,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    try:
        while embedded_messages(env["DATABASE_URL"]) < expected:
            if worker.poll() is not None:
                raise RuntimeError("the worker exited")
            time.sleep(2)
        seconds = time.monotonic() - started
    finally:
        worker.terminate()
        worker.wait(30)
    # The worker's CPU time is known once it has exited.
    return f"{seconds:.1f}s wall clock, {children_cpu_seconds() - cpu_before:.1f}s CPU ({load()})"


def load() -> str:
    return "load average " + ", ".join(f"{value:.1f}" for value in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("locomo", type=Path, nargs="?", default=DEFAULT_LOCOMO, help="LoCoMo's locomo10.json")
    locomo = parser.parse_args().locomo
    if not locomo.is_file():
        print(f"no LoCoMo file at {locomo}")
        return 1
    data_dir = Path(tempfile.mkdtemp(prefix="measure-", dir=REPO_DIR / ".data"))
    try:
        with backing_services(data_dir=data_dir, database="memory", durable=False) as service_env:
            env = os.environ | service_env | {"DJANGO_SETTINGS_MODULE": "memory_project.settings.local"}
            timed_manage("migrate", "--noinput", env=env)
            took, report = timed_manage(
                "import_memories", str(locomo), "--format", "locomo", "--agent", "locomo", env=env
            )
            print(f"import_memories --format locomo: {took}\n{report}")
            took = wait_for_worker_embeddings(env=env, expected=5882)
            print(f"one worker (solo pool) embedded the 5,882 queued messages: {took}, start-up included\n")
            took, report = timed_manage(
                "import_memories", str(locomo), "--format", "locomo", "--agent", "locomo", env=env
            )
            print(f"the same import again: {took}\n{report}")
            took, report = timed_manage(
                "reembed", "--provider", "local", "--model", "all-MiniLM-L6-v2-copy", "--dimensions", "384", env=env
            )
            print(f"reembed of everything into a second local space: {took}")
            print("\n".join(line for line in report.splitlines() if "/s, ETA" not in line or "ETA 0s" in line))
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
