"""Starts the whole stack with `make run`, on a free port and a temporary data folder, and stops it as Ctrl-C in its
terminal does: SIGINT to the whole process group (make and the devstack)."""

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request

import psutil
import pytest

from devstack.processes import free_port
from tests.conftest import REPO_DIR

pytestmark = pytest.mark.stack


def _get_json(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def _processes_using(path: str) -> list[psutil.Process]:
    """Processes whose command line or environment names the folder: every process `make run` started inherits
    DATA_DIR, whatever session it runs in."""
    found = []
    for process in psutil.process_iter(["cmdline", "environ"]):
        named = (process.info["cmdline"] or []) + list((process.info["environ"] or {}).values())
        if any(path in part for part in named):
            found.append(process)
    return found


def test_make_run_stack_comes_up_healthy_and_stops_cleanly_on_ctrl_c(tmp_path):
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    env |= {"DJANGO_SUPERUSER_USERNAME": "operator", "DJANGO_SUPERUSER_PASSWORD": "a-long-test-password"}
    env |= {"PORT": str(port), "DATA_DIR": str(tmp_path)}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    stack = subprocess.Popen(
        ["make", "--no-print-directory", "run"],
        cwd=REPO_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # a process group of its own, as a terminal gives `make run`
    )
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(stack.stdout), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 240
        status, body = 0, {}
        while time.monotonic() < deadline and stack.poll() is None:
            try:
                status, body = _get_json(f"http://127.0.0.1:{port}/health/")
            except (urllib.error.URLError, OSError):
                status = 0
            if status == 200 and any("Ctrl-C stops everything" in line for line in output):
                break
            time.sleep(1)
        assert status == 200, body
        assert all(component["status"] == "up" for component in body["components"].values())
        assert set(body["components"]) == {
            "database",
            "pgvector",
            "redis",
            "worker",
            "embeddings",
            "formation",
            "memory_review",
        }
        assert (tmp_path / "postgres" / "PG_VERSION").exists()
        # /metrics answers this machine without a token under `make run` (local settings), and the workers' too.
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as response:
            assert b"memory_http_requests_total" in response.read()
        targets = json.loads((tmp_path / "metrics" / "targets.json").read_text())
        jobs = [target["labels"]["job"] for target in targets]
        assert jobs == ["memory-web", "memory-worker", "memory-formation-worker"]
        with urllib.request.urlopen(f"http://{targets[1]['targets'][0]}/metrics", timeout=30) as response:
            assert response.status == 200 and response.headers["Content-Type"].startswith("text/plain; version=")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(stack.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole foreground process group
        stack.wait(timeout=90)
        reader.join(10)
    printed = "".join(output)
    # make re-raises the SIGINT it received once its child has exited; the devstack itself exits 0.
    assert stack.returncode in (0, -signal.SIGINT, 130), printed
    assert "[devstack] stopping: the web server and workers first" in printed
    # The app processes stopped before PostgreSQL and Redis: no reconnection errors, no traceback.
    assert "Traceback" not in printed, printed[-5000:]
    assert "Cannot connect to redis" not in printed and "Connection refused" not in printed, printed[-5000:]
    assert "login operator / a-long-test-password" in printed
    assert f"http://127.0.0.1:{port}/health/" in printed and f"http://127.0.0.1:{port}/admin/" in printed
    # A process the stack stopped may take a moment to be gone on a loaded machine; one still there after 15 s
    # outlived the stack.
    deadline = time.monotonic() + 15
    while _processes_using(str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _processes_using(str(tmp_path)) == [], "a server outlived the stack"
