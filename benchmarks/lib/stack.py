"""A throwaway service stack for the benchmarks: embedded PostgreSQL + Redis (devstack), migrated,
with the web app on 127.0.0.1 and optionally one Celery worker. Everything started here is stopped on exit and the
data folder deleted, whatever happens in between."""

from __future__ import annotations

import contextlib
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from devstack.postgres import SERVING_SHARED_BUFFERS
from devstack.processes import ProcessGroup, free_port, wait_for_port
from devstack.services import backing_services
from devstack.workers import worker_commands

REPO_DIR = Path(__file__).resolve().parents[2]
RESULTS_DIR = REPO_DIR / "benchmarks" / "results"

API_KEY = re.compile(r"^(mem_\S+)$", re.MULTILINE)


@dataclass
class Stack:
    env: dict[str, str]
    data_dir: Path
    base_url: str = ""
    processes: ProcessGroup = field(default_factory=ProcessGroup)

    def manage(self, *args: str, capture: bool = True) -> str:
        completed = subprocess.run(
            [sys.executable, str(REPO_DIR / "manage.py"), *args],
            env=self.env,
            cwd=REPO_DIR,
            check=True,
            capture_output=capture,
            text=True,
        )
        return completed.stdout if capture else ""

    def api_key(self, agent: str) -> str:
        output = self.manage("api_key", "create", "--agent", agent, "--create-agent", "--name", "benchmark")
        match = API_KEY.search(output)
        if not match:
            raise RuntimeError(f"no API key in: {output}")
        return match[1]

    def start_web(
        self,
        *,
        workers: int = 2,
        threads: int = 4,
        name: str = "web",
        settings_env: dict[str, str] | None = None,
        code_dir: Path | None = None,
    ) -> str:
        """The web app on 127.0.0.1 as production serves it (gunicorn running memory_project.wsgi: Django, and /mcp),
        with `workers` processes of `threads` threads. `name` and `settings_env` start another one beside it with other
        settings (a study of a setting over the same data); `code_dir`, with the code of another checkout (a git
        worktree of another commit: before and after over the same data, the same schema)."""
        port = free_port()
        command = [sys.executable, "-m", "gunicorn", "memory_project.wsgi:application", "--bind",
                   f"127.0.0.1:{port}", "--workers", str(workers), "--threads", str(threads), "--log-level",
                   "warning", "--timeout", "120"]  # fmt: skip
        env = self.env | (settings_env or {})
        if code_dir is not None:
            # Started in that checkout, so that everything gunicorn imports (its config file first) is its code.
            env |= {"PYTHONPATH": str(code_dir)}
        self.processes.start(name, command, env=env, cwd=code_dir)
        wait_for_port(port, timeout=60)
        self.base_url = f"http://127.0.0.1:{port}"
        wait_until_answering(f"{self.base_url}/health/", timeout=60)
        return self.base_url

    def start_worker(self, *, concurrency: int = 1) -> None:
        command = [sys.executable, "-m", "celery", "-A", "memory_project", "worker", "-l", "warning"]
        self.processes.start("worker", [*command, "--concurrency", str(concurrency)], env=self.env)

    def start_deployment_workers(self) -> None:
        """The workers `make run` and docker-compose.yml run: prefork for the default queue, a thread pool for the
        formation queue, both at nice 19 (devstack.workers.worker_commands)."""
        for name, (command, env) in worker_commands(env=self.env, log_level="warning").items():
            self.processes.start(name, command, env=env)

    def pids(self, name: str) -> list[int]:
        """The process and its children (gunicorn's and celery's workers)."""
        process = self.processes.processes.get(name)
        if process is None:
            return []
        children = subprocess.run(["pgrep", "-g", str(process.pid)], capture_output=True, text=True).stdout.split()
        return sorted({process.pid, *map(int, children)})

    def cpu_seconds(self, *, web: str = "web") -> dict[str, float]:
        """CPU time (user + system) spent so far by the web server (`web`: the name it was started under),
        PostgreSQL (the postmaster, its live backends and the ones that have exited), the workers and this process (the
        benchmark's client): the difference over a measured stretch says what each part costs."""
        postmaster = int((self.data_dir / "postgres" / "postmaster.pid").read_text().split()[0])
        backends = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True, text=True).stdout.split()
        own = os.times()
        return {
            "web": _cpu_seconds(self.pids(web)),
            "postgres": _cpu_seconds([postmaster, *map(int, backends)], exited_children_of=postmaster),
            "workers": _cpu_seconds([*self.pids("worker"), *self.pids("formation-worker")]),
            "client": own.user + own.system,
        }

    def rss_mb(self, name: str) -> float:
        """Resident memory of the process and its children, in MB."""
        return sum(self.rss_mb_each(name))

    def rss_mb_each(self, name: str) -> list[float]:
        """Resident memory of the process and of each of its children, in MB."""
        sizes = []
        for pid in self.pids(name):
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        sizes.append(int(line.split()[1]) / 1024)
        return sizes


def _cpu_seconds(pids: list[int], *, exited_children_of: int | None = None) -> float:
    """utime + stime of the processes (and cutime + cstime of one of them: its children that have exited)."""
    ticks = 0
    for pid in pids:
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            # After the command's closing parenthesis: utime and stime are fields 12 and 13, cutime and cstime 14, 15.
            ticks += int(fields[11]) + int(fields[12])
            if pid == exited_children_of:
                ticks += int(fields[13]) + int(fields[14])
    return ticks / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def throwaway_stack(*, settings_module: str = "memory_project.settings.local", extra_env=None) -> Iterator[Stack]:
    (REPO_DIR / ".data").mkdir(exist_ok=True)
    # SIGTERM (a `kill` of the benchmark) unwinds like Ctrl-C, so the servers below are stopped all the same.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    data_dir = Path(tempfile.mkdtemp(prefix="bench-", dir=REPO_DIR / ".data"))
    stack = None
    try:
        with backing_services(
            data_dir=data_dir, database="memory", durable=False, shared_buffers=SERVING_SHARED_BUFFERS
        ) as service_env:
            env = os.environ | service_env | {"DJANGO_SETTINGS_MODULE": settings_module} | (extra_env or {})
            env.setdefault("DJANGO_DEBUG", "false")
            env.setdefault("API_THROTTLE_RATE", "")  # benchmarks send far more than a client would
            env.setdefault("TQDM_DISABLE", "1")  # no embedding progress bars in the servers' output
            stack = Stack(env=env, data_dir=data_dir)
            try:
                stack.manage("migrate", "--noinput")
                yield stack
            finally:
                stack.processes.stop()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def _exit_on_signal(signum, frame) -> None:
    raise SystemExit(128 + signum)


def wait_until_answering(url: str, *, timeout: float) -> None:
    """Any HTTP answer will do (health is 503 until a worker's heartbeat arrives; the web app is up all the same)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=10):
                return
        except urllib.error.HTTPError:
            return
        except (urllib.error.URLError, OSError):
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f}s")


def machine() -> dict:
    """What the figures were measured on."""
    cpu = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory_gb = 0.0
    with contextlib.suppress(OSError):
        memory_gb = int(Path("/proc/meminfo").read_text().split()[1]) / 1024 / 1024
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": round(memory_gb, 1),
        "python": platform.python_version(),
        "load_average_at_start": os.getloadavg()[0],
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def wait(seconds: float) -> None:
    time.sleep(seconds)
