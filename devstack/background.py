"""Run a command below the web server for the CPU: `python -m devstack.background COMMAND [ARGS...]`.

`nice 19` alone ranks a process only against the processes of its own autogroup: on a kernel with
sched_autogroup_enabled (most desktop and VM kernels; not inside a container's cgroup, where cpu_shares rank it), every
session is a group of its own and the groups share the CPU by their own nice, whatever their processes' nice values.
`make run` starts each process in a session of its own (devstack.processes.ProcessGroup), so a nice-19 worker had as
much CPU as the web server. This can set the autogroup's nice too, when the command leads its own session (so the
group is its alone), then sets the process's nice to 19, and runs the command in place (exec).

The autogroup gets nice WORKER_AUTOGROUP_NICE when it is set (0, the default, leaves it alone, as before). 6 gives
the workers a quarter of a nice-0 group's weight (268 against 1024), the weight docker-compose.yml gives their
containers (cpu_shares 256). It is not the default because it was not measured to help: on the shared benchmark host
(load 15 to 30 from other work) an autogroup of nice 6, and of 19, starved the formation worker (11% of a core) until
its threads held pooled database connections past the pool's timeout (docs/benchmarks/history.md section 19)."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

PROCESS_NICE = 19


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit("usage: python -m devstack.background COMMAND [ARGS...]")
    autogroup_nice = int(os.environ.get("WORKER_AUTOGROUP_NICE", "0"))
    if autogroup_nice and os.getsid(0) == os.getpid():
        with contextlib.suppress(OSError):
            Path("/proc/self/autogroup").write_text(str(autogroup_nice))
    os.nice(PROCESS_NICE - os.nice(0))
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
