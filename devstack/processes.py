"""What every command of the stack uses: its log line, free ports, waiting for a port or a health check, `manage.py`,
and the group of child processes a run starts and stops."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
# Under the data folder while `make run` is up: the environment that reaches its database and Redis (devstack.manage).
STACK_ENV_FILE = "stack.env"


def log(message: str) -> None:
    print(f"[devstack] {message}", flush=True)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port} after {timeout:.0f}s")


def wait_until_healthy(url: str, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(1)
    log(f"warning: {url} did not report every component up within {timeout:.0f}s")


def manage(*args: str, env: dict[str, str]) -> None:
    subprocess.run([PYTHON, str(REPO_DIR / "manage.py"), *args], env=env, check=True, cwd=REPO_DIR)


class ProcessGroup:
    """Child processes, each in its own session so that one signal reaches a child and everything it spawned."""

    def __init__(self) -> None:
        self.processes: dict[str, subprocess.Popen] = {}

    def start(self, name: str, command: list[str], *, env: dict[str, str], cwd: Path | None = None) -> None:
        self.processes[name] = subprocess.Popen(
            command, env=env, cwd=cwd or REPO_DIR, stdin=subprocess.DEVNULL, start_new_session=True
        )

    def first_exited(self) -> str | None:
        return next((name for name, process in self.processes.items() if process.poll() is not None), None)

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        for process in self.processes.values():
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
