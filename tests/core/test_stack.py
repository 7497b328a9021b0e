"""Starts the whole stack the way `make run` does, on free ports and a temporary data folder."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import psutil
import pytest

from memory_project.devstack import free_port
from tests.conftest import REPO_DIR

pytestmark = pytest.mark.stack


def _get_json(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def _processes_using(path: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if any(path in part for part in process.info["cmdline"] or []):
            found.append(process)
    return found


def test_make_run_stack_comes_up_healthy_and_stops_cleanly(tmp_path):
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    env |= {"DJANGO_SUPERUSER_USERNAME": "operator", "DJANGO_SUPERUSER_PASSWORD": "a-long-test-password"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    stack = subprocess.Popen(
        [sys.executable, "-m", "memory_project.devstack", "--data-dir", str(tmp_path), "run", "--port", str(port)],
        cwd=REPO_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
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
    finally:
        stack.send_signal(signal.SIGINT)
        stack.wait(timeout=90)
        reader.join(10)
    printed = "".join(output)
    assert stack.returncode == 0, printed
    assert "login operator / a-long-test-password" in printed
    assert f"http://127.0.0.1:{port}/health/" in printed and f"http://127.0.0.1:{port}/admin/" in printed
    # A process the stack stopped may take a moment to be gone on a loaded machine; one still there after 15 s
    # outlived the stack.
    deadline = time.monotonic() + 15
    while _processes_using(str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _processes_using(str(tmp_path)) == [], "a server outlived the stack"
