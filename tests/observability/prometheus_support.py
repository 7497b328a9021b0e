"""A real Prometheus server for tests: Debian's `prometheus` (make install puts it at /usr/bin/prometheus), on a free
loopback port, with a configuration the test writes, its data in a temporary folder, stopped by pid at the end."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from devstack.processes import free_port


def prometheus_binary(name: str = "prometheus") -> str:
    """Debian's binary; the tests that need it are skipped without it, as the browser tests are without Chromium."""
    for candidate in (f"/usr/bin/{name}", shutil.which(name)):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    pytest.skip(f"no {name} at /usr/bin/{name} or on PATH: `make install` installs Debian's prometheus package")


@dataclass
class PrometheusServer:
    url: str

    def query(self, expression: str) -> list[dict]:
        """An instant query: the result vector (each item's metric labels and [time, value])."""
        parameters = urllib.parse.urlencode({"query": expression})
        with urllib.request.urlopen(f"{self.url}/api/v1/query?{parameters}", timeout=10) as response:
            body = json.loads(response.read())
        assert body["status"] == "success", body
        return body["data"]["result"]

    def value(self, expression: str) -> float | None:
        """The one value of a query whose result is a single sample (a sum, say); None while there is none."""
        result = self.query(expression)
        return float(result[0]["value"][1]) if result else None

    def series(self, match: str) -> list[dict]:
        parameters = urllib.parse.urlencode({"match[]": match})
        with urllib.request.urlopen(f"{self.url}/api/v1/series?{parameters}", timeout=10) as response:
            return json.loads(response.read())["data"]

    def metric_names(self) -> set[str]:
        with urllib.request.urlopen(f"{self.url}/api/v1/label/__name__/values", timeout=10) as response:
            return set(json.loads(response.read())["data"])

    def rules(self) -> list[dict]:
        with urllib.request.urlopen(f"{self.url}/api/v1/rules", timeout=10) as response:
            return [rule for group in json.loads(response.read())["data"]["groups"] for rule in group["rules"]]

    def targets_up(self) -> dict[str, str]:
        with urllib.request.urlopen(f"{self.url}/api/v1/targets", timeout=10) as response:
            active = json.loads(response.read())["data"]["activeTargets"]
        return {target["labels"]["job"]: target["health"] for target in active}


@contextlib.contextmanager
def prometheus_running(
    folder: Path, *, jobs: dict[str, str], bearer_token: str, rule_files: list[Path] | None = None
) -> Iterator[PrometheusServer]:
    """Prometheus scraping each job's target (host:port) every second, with the bearer token."""
    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
        "scrape_configs": [
            {
                "job_name": job,
                "authorization": {"type": "Bearer", "credentials": bearer_token},
                "static_configs": [{"targets": [target]}],
            }
            for job, target in jobs.items()
        ],
    }
    if rule_files:
        config["rule_files"] = [str(path) for path in rule_files]
    (folder / "prometheus.yml").write_text(yaml.safe_dump(config))
    port = free_port()
    command = [
        prometheus_binary(),
        f"--config.file={folder / 'prometheus.yml'}",
        f"--storage.tsdb.path={folder / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--log.level=warn",
    ]
    with (folder / "prometheus.log").open("wb") as log:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    server = PrometheusServer(url=f"http://127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                pytest.fail(f"prometheus exited: {(folder / 'prometheus.log').read_text()[-2000:]}")
            with (
                contextlib.suppress(urllib.error.URLError, OSError),
                urllib.request.urlopen(f"{server.url}/-/ready", timeout=2) as response,
            ):
                if response.status == 200:
                    break
            if time.monotonic() > deadline:
                pytest.fail("prometheus was not ready within 60 s")
            time.sleep(0.2)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_for(condition, *, timeout: float, what: str):
    """Poll condition() until truthy (Prometheus scrapes every second); fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail(f"gave up after {timeout:.0f}s waiting for {what}")
        time.sleep(0.5)
