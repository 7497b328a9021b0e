"""`make run`: the backing services (and the local LLM server with LLM_PROVIDER=local), migrations, the admin login,
then the web server, the two Celery workers and beat until Ctrl-C, which stops every process it started, the app
first while the database and Redis still answer."""

from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import signal
import time
from pathlib import Path
from types import FrameType
from typing import Any

from devstack.local_llm import local_llm
from devstack.postgres import SERVING_SHARED_BUFFERS
from devstack.processes import (
    PYTHON,
    STACK_ENV_FILE,
    ProcessGroup,
    free_port,
    log,
    manage,
    wait_for_port,
    wait_until_healthy,
)
from devstack.services import backing_services
from devstack.workers import worker_commands


def ensure_admin_user(*, env: dict[str, str], data_dir: Path) -> str:
    """The admin login: DJANGO_SUPERUSER_USERNAME / _PASSWORD when given; otherwise generated once, kept (0600)
    under the data folder and printed at every start."""
    credentials_file = data_dir / "admin-credentials.txt"
    username = os.environ.get("DJANGO_SUPERUSER_USERNAME")
    password = os.environ.get("DJANGO_SUPERUSER_PASSWORD")
    if not (username and password):
        if credentials_file.exists():
            username, _, password = credentials_file.read_text().strip().partition(":")
        else:
            username, password = "admin", secrets.token_urlsafe(12)
            credentials_file.write_text(f"{username}:{password}\n")
            credentials_file.chmod(0o600)
    manage("ensure_admin_user", "--username", username, env=env | {"ADMIN_PASSWORD": password})
    return f"{username} / {password}"


class Stop(Exception):
    """Ctrl-C or SIGTERM: unwinds the run so that everything it started is stopped."""


def raise_stop(signum: int, frame: FrameType | None) -> None:
    raise Stop()


def metrics_environments(*, data_dir: Path, names: list[str]) -> dict[str, dict[str, str]]:
    """Prometheus's multiprocess mode for each server (core/observability/metrics.py): an empty folder of its own, and
    for a Celery worker a free port for its metrics endpoint. Also written as a Prometheus file_sd list of the targets
    (<data-dir>/metrics/targets.json), which a local Prometheus can scrape (docs/operations/reference.md)."""
    root = data_dir / "metrics"
    shutil.rmtree(root, ignore_errors=True)
    environments = {}
    for name in names:
        (root / name).mkdir(parents=True)
        environments[name] = {"PROMETHEUS_MULTIPROC_DIR": str(root / name)}
        if name != "web":
            environments[name] |= {"WORKER_METRICS_PORT": str(free_port()), "WORKER_METRICS_ADDRESS": "127.0.0.1"}
    return environments


def metrics_targets_write(*, data_dir: Path, web: str, environments: dict[str, dict[str, str]]) -> list[str]:
    targets: list[dict[str, Any]] = [{"targets": [web], "labels": {"job": "memory-web"}}] + [
        {"targets": [f"127.0.0.1:{env['WORKER_METRICS_PORT']}"], "labels": {"job": f"memory-{name}"}}
        for name, env in environments.items()
        if "WORKER_METRICS_PORT" in env
    ]
    (data_dir / "metrics" / "targets.json").write_text(json.dumps(targets, indent=2) + "\n")
    return [f"{target['labels']['job'].removeprefix('memory-')} {target['targets'][0]}" for target in targets]


def stack_env_write(*, data_dir: Path, env: dict[str, str]) -> None:
    """What a management command needs to reach this stack (DATABASE_URL with the embedded database's socket,
    REDIS_URL, the settings module, the base URL) and the pid that owns it, for `make manage` (devstack.manage).
    Readable by this user only: the database URL is a credential; removed when the stack stops."""
    path = data_dir / STACK_ENV_FILE
    lines = [f"{name}={shlex.quote(value)}" for name, value in sorted(env.items())] + [f"STACK_PID={os.getpid()}"]
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o600)


def run(*, port: int, host: str, data_dir: Path) -> int:
    signal.signal(signal.SIGINT, raise_stop)
    children = ProcessGroup()
    try:
        with (
            backing_services(
                data_dir=data_dir, database="memory", durable=True, shared_buffers=SERVING_SHARED_BUFFERS
            ) as service_env,
            local_llm(data_dir=data_dir) as llm_env,
        ):
            try:
                return _serve(children=children, port=port, host=host, data_dir=data_dir, env=service_env | llm_env)
            except Stop:
                log("stopping: the web server and workers first, then the LLM server, Redis and PostgreSQL")
                return 0
            finally:
                # The app stops while the database and Redis still answer: a worker that loses its broker or database
                # before its own shutdown prints pages of reconnection tracebacks. A second Ctrl-C changes nothing.
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                children.stop()
    except Stop:
        log("stopping")  # during start-up, before anything of the app ran
        return 0
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        children.stop()
        (data_dir / STACK_ENV_FILE).unlink(missing_ok=True)


def _serve(*, children: ProcessGroup, port: int, host: str, data_dir: Path, env: dict[str, str]) -> int:
    stack_env = env | {"DJANGO_SETTINGS_MODULE": "memory_project.settings.local"}
    env = os.environ | stack_env
    manage("migrate", "--noinput", env=env)
    admin_login = ensure_admin_user(env=env, data_dir=data_dir)
    celery = [PYTHON, "-m", "celery", "-A", "memory_project"]
    workers = worker_commands(env=env)
    metrics_env = metrics_environments(data_dir=data_dir, names=["web", *workers])
    # Django with the MCP server at /mcp beside it, as production serves them (gunicorn.conf.py, docs/architecture.md).
    web = [PYTHON, "-m", "gunicorn", "memory_project.wsgi:application", "--bind", f"{host}:{port}"]
    children.start("web", [*web, "--log-level", "info"], env=env | metrics_env["web"])
    for name, (command, worker_env) in workers.items():
        children.start(name, command, env=worker_env | metrics_env[name])
    children.start("beat", [*celery, "beat", "-l", "info", "-s", str(data_dir / "celerybeat-schedule")], env=env)
    base = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}"
    wait_for_port(port, timeout=60)
    wait_until_healthy(f"{base}/health/", timeout=120)
    scraped = metrics_targets_write(data_dir=data_dir, web=base.removeprefix("http://"), environments=metrics_env)
    for name, worker_metrics in metrics_env.items():
        if "WORKER_METRICS_PORT" in worker_metrics:  # a worker opens it once ready, which may follow its heartbeat
            try:
                wait_for_port(int(worker_metrics["WORKER_METRICS_PORT"]), timeout=60)
            except RuntimeError:
                log(f"warning: the {name}'s metrics endpoint did not open within 60s")
    stack_env_write(data_dir=data_dir, env=stack_env | {"MEMORY_BASE_URL": base})
    log("the memory service is up:")
    log(f"  admin     {base}/admin/   (login {admin_login})")
    log(f"  API docs  {base}/api/v1/docs/")
    log(f"  MCP       {base}/mcp   (Streamable HTTP; docs/integrations.md)")
    log(f"  health    {base}/health/")
    log(f"  metrics   {base}/metrics and the workers' ({', '.join(scraped[1:])}), from this machine")
    log(f'  commands  make manage ARGS="..." (this stack\'s environment: {data_dir / STACK_ENV_FILE})')
    log("Ctrl-C stops everything.")
    while (exited := children.first_exited()) is None:
        time.sleep(0.5)
    log(f"{exited} exited; stopping the rest")
    return 1
