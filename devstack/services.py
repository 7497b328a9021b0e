"""The backing services of a run: embedded PostgreSQL and Redis, or what DATABASE_URL / REDIS_URL point at instead."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from devstack.postgres import EmbeddedPostgres
from devstack.processes import free_port, log
from devstack.redis import EmbeddedRedis


@contextlib.contextmanager
def backing_services(
    *, data_dir: Path, database: str, durable: bool, shared_buffers: str | None = None
) -> Iterator[dict[str, str]]:
    """Start what DATABASE_URL / REDIS_URL do not already point at; yield the environment to run Django with."""
    started: list[EmbeddedPostgres | EmbeddedRedis] = []
    env: dict[str, str] = {}
    try:
        if os.environ.get("DATABASE_URL"):
            env["DATABASE_URL"] = os.environ["DATABASE_URL"]
        else:
            postgres = EmbeddedPostgres(
                data_dir / "postgres", database=database, durable=durable, shared_buffers=shared_buffers
            )
            started.append(postgres)
            env["DATABASE_URL"] = postgres.start()
            log(f"PostgreSQL + pgvector running from {postgres.data_dir}")
        if os.environ.get("REDIS_URL"):
            env["REDIS_URL"] = os.environ["REDIS_URL"]
        else:
            redis_server = EmbeddedRedis(data_dir / "redis", port=free_port())
            started.append(redis_server)
            env["REDIS_URL"] = redis_server.start()
            log(f"Redis-compatible server ({Path(redis_server.binary()).name}) on port {redis_server.port}")
        yield env
    finally:
        for service in reversed(started):
            service.stop()
