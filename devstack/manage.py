"""`make manage ARGS="..."`: a management command against the stack `make run` started, in another terminal. `make run`
writes that stack's environment (the embedded database's socket in DATABASE_URL, REDIS_URL, the settings module) to
<data-dir>/stack.env and removes it when it stops; this reads it and runs manage.py with it. DATABASE_URL set in the
environment wins (a database of your own), as it does for `make run`."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from devstack.processes import PYTHON, REPO_DIR, STACK_ENV_FILE


class StackNotRunning(Exception):
    pass


def stack_env_read(*, data_dir: Path) -> dict[str, str]:
    """The running stack's environment; StackNotRunning saying what to do when there is none."""
    path = data_dir / STACK_ENV_FILE
    if not path.exists():
        raise StackNotRunning(
            f"no stack is running for {data_dir} ({path} is missing): start it with `make run` in another terminal, "
            "or set DATABASE_URL and REDIS_URL to your own servers."
        )
    env = {}
    for line in path.read_text().splitlines():
        name, _, value = line.partition("=")
        env[name] = shlex.split(value)[0] if value else ""
    pid = int(env.pop("STACK_PID", "0"))
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError, OverflowError):
        raise StackNotRunning(
            f"the stack that wrote {path} (pid {pid}) is not running any more: start it with `make run`."
        ) from None
    return env


def manage(*, data_dir: Path, arguments: list[str]) -> int:
    if os.environ.get("DATABASE_URL"):
        env = dict(os.environ)
    else:
        try:
            env = os.environ | stack_env_read(data_dir=data_dir)
        except StackNotRunning as problem:
            print(f"make manage: {problem}", flush=True)
            return 2
    return subprocess.run([PYTHON, str(REPO_DIR / "manage.py"), *arguments], env=env, cwd=REPO_DIR).returncode
