"""Starts the whole stack with `make run`, on a free port and a temporary data folder, runs the README's quick start
against it as a newcomer would (its shell block, `make manage` included, then its Python block), and stops it as
Ctrl-C in its terminal does: SIGINT to the whole process group (make and the devstack). The periodic jobs that ran
meanwhile did nothing, and printed nothing at INFO."""

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
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


def _readme_quick_start() -> tuple[str, str]:
    """The README's quick start: its shell block and its Python block, as written."""
    section = (REPO_DIR / "README.md").read_text().split("## Quick start", 1)[1].split("\n## ", 1)[0]
    shell = re.search(r"```sh\n(.*?)```", section, re.S)
    python = re.search(r"```python\n(.*?)```", section, re.S)
    assert shell and python, "the README's quick start has a sh block and a python block"
    return shell.group(1), python.group(1)


def _quick_start_run(*, port: int, env: dict[str, str]) -> None:
    shell, python = _readme_quick_start()
    shell = shell.replace("http://127.0.0.1:8000", f"http://127.0.0.1:{port}")
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", shell + '\nprintf "\\nkey=%s\\n" "$MEMORY_API_KEY"'],
        cwd=REPO_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "The user lives in Lisbon." in done.stdout, done.stdout  # the search's answer
    key = done.stdout.rsplit("key=", 1)[1].strip()
    assert key.startswith("mem_")
    client_env = env | {
        "MEMORY_URL": f"http://127.0.0.1:{port}",
        "MEMORY_API_KEY": key,
        "PYTHONPATH": str(REPO_DIR / "clients" / "python"),
    }
    ran = subprocess.run(
        [sys.executable, "-c", python], cwd=REPO_DIR, env=client_env, capture_output=True, text=True, timeout=180
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "nurse" in ran.stdout, ran.stdout


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
        stack_env = (tmp_path / "stack.env").read_text()
        assert "DATABASE_URL=" in stack_env and "REDIS_URL=" in stack_env
        assert (tmp_path / "stack.env").stat().st_mode & 0o077 == 0
        _quick_start_run(port=port, env=env)
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
    assert 'make manage ARGS="..."' in printed
    # Beat ran its jobs every 10 s meanwhile; with nothing to do, they stayed below INFO.
    assert "Sending due task" not in printed and "Task formation.resume_formation[" not in printed, printed[-3000:]
    assert not re.search(r"succeeded in \S+s: 0$", printed, re.M), printed[-3000:]
    assert not (tmp_path / "stack.env").exists()
    assert f"http://127.0.0.1:{port}/health/" in printed and f"http://127.0.0.1:{port}/admin/" in printed
    # A process the stack stopped may take a moment to be gone on a loaded machine; one still there after 15 s
    # outlived the stack.
    deadline = time.monotonic() + 15
    while _processes_using(str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _processes_using(str(tmp_path)) == [], "a server outlived the stack"
