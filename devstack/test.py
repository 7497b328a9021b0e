"""`make test`: fresh backing services in a folder of their own under the data folder, pytest run against them, and
the folder removed afterwards, so that runs never share state."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from devstack.processes import PYTHON, REPO_DIR
from devstack.services import backing_services


def test(*, data_dir: Path, pytest_args: list[str]) -> int:
    """Fresh servers in a folder of their own, removed afterwards, so that runs never share state."""
    test_dir = Path(tempfile.mkdtemp(prefix="test-", dir=data_dir))
    try:
        with backing_services(data_dir=test_dir, database="memory", durable=False) as service_env:
            env = os.environ | service_env | {"DJANGO_SETTINGS_MODULE": "memory_project.settings.test"}
            return subprocess.run([PYTHON, "-m", "pytest", *pytest_args], env=env, cwd=REPO_DIR).returncode
    finally:
        shutil.rmtree(test_dir, ignore_errors=True)
