"""Run a command below the web server for the CPU: `python -m devstack.background COMMAND [ARGS...]`.

`nice 19` alone ranks a process only against the processes of its own autogroup: on a kernel with
sched_autogroup_enabled (most desktop and VM kernels; not inside a container's cgroup, where cpu_shares rank it), every
session is a group of its own and the groups share the CPU by their own nice, whatever their processes' nice values.
`make run` starts each process in a session of its own (devstack.processes.ProcessGroup), so a nice-19 worker had as
much CPU as the web server. This can set the autogroup's nice too, when the command leads its own session (so the
group is its alone), then sets the process's nice to 19, and runs the command in place (exec).

The autogroup gets nice WORKER_AUTOGROUP_NICE, 6 by default (0 leaves it alone): a quarter of a nice-0 group's
weight (268 against 1024), the weight docker-compose.yml gives the workers' containers (cpu_shares 256). Measured on a
quiet 2-core machine (docs/benchmarks/history.md section 19): with formation draining beside four clients that append
and search without pause, their p95 rose 200% at 0, 27 to 37% at 6 and 17 to 22% at 19, formation meanwhile 500, 228
and 155 sessions a minute; alone, formation drains as fast at every level. 6 keeps requests within the +50% budget
and formation at the larger share. On a host already loaded by other work (load 15 to 30) a low level starved the
formation worker until its threads held pooled connections past the pool's timeout: raise it there, or give the
workers cores of their own."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

PROCESS_NICE = 19


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit("usage: python -m devstack.background COMMAND [ARGS...]")
    autogroup_nice = int(os.environ.get("WORKER_AUTOGROUP_NICE", "6"))
    if autogroup_nice and os.getsid(0) == os.getpid():
        with contextlib.suppress(OSError):
            Path("/proc/self/autogroup").write_text(str(autogroup_nice))
    os.nice(PROCESS_NICE - os.nice(0))
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
