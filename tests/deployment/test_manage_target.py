"""`make manage` without a running stack says what to do instead of failing to connect."""

from __future__ import annotations

import os
import subprocess

from tests.conftest import REPO_DIR


def test_make_manage_without_a_stack_says_to_start_one(tmp_path):
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}

    done = subprocess.run(
        ["make", "-s", "manage", "ARGS=check"],
        cwd=REPO_DIR,
        env=env | {"DATA_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert done.returncode != 0
    assert "no stack is running" in done.stdout and "make run" in done.stdout, done.stdout + done.stderr
    assert "Connection refused" not in done.stdout + done.stderr
