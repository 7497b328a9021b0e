"""Run a command at the lowest CPU priority: `python -m devstack.background COMMAND [ARGS...]`.

`nice 19` alone ranks a process only against the processes of its own autogroup: on a kernel with
sched_autogroup_enabled (most desktop and VM kernels; not inside a container's cgroup, where cpu_shares rank it), every
session is a group of its own and the groups share the CPU equally, whatever their processes' nice values. `make run`
starts each process in a session of its own (devstack.processes.ProcessGroup), so a nice-19 worker got as much CPU as
the web server. This sets the autogroup's nice to 19 too, when the command leads its own session (so the group is its
alone), then the process's, and runs the command in place (exec)."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

LOWEST = 19


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit("usage: python -m devstack.background COMMAND [ARGS...]")
    if os.getsid(0) == os.getpid():
        with contextlib.suppress(OSError):
            Path("/proc/self/autogroup").write_text(str(LOWEST))
    os.nice(LOWEST - os.nice(0))
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
