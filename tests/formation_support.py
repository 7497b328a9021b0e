"""Helpers for the formation tests that run real processes: bounded waits, and a local HTTP server that speaks the
OpenAI chat-completions protocol so that the real client (openai SDK) is exercised end to end."""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

import pytest

T = TypeVar("T")

# How each prompt file starts: the stub tells the formation steps apart by their system prompt.
PURPOSE_MARKERS = {
    "extract_facts": "You extract durable facts",
    "reconcile_facts": "You keep an agent's memory of facts consistent",
    "reflect": "You write reflections",
    "consolidate": "You maintain a consolidated memory note",
}


def wait_until(condition: Callable[[], T], *, timeout: float, what: str, process: subprocess.Popen | None = None) -> T:
    """Poll condition() until it returns something truthy; fail the test after `timeout` seconds, or at once when
    the process the wait depends on has exited."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if process is not None and process.poll() is not None:
            pytest.fail(f"the worker exited (code {process.returncode}) while waiting for {what}")
        if time.monotonic() > deadline:
            pytest.fail(f"gave up after {timeout:.0f}s waiting for {what}")
        time.sleep(0.2)


@contextlib.contextmanager
def celery_workers_paused(queue: str = "celery") -> Iterator[list[str]]:
    """Workers already running (e.g. the session-wide offline one) stop consuming `queue` until the block ends, so
    that the workers a test starts itself are the only ones to take that queue's tasks."""
    from memory_project.celery import app

    others = sorted({name for reply in app.control.ping(timeout=1.0) for name in reply})
    if others:
        app.control.cancel_consumer(queue, destination=others, reply=True, timeout=5.0)
    try:
        yield others
    finally:
        if others:
            app.control.add_consumer(queue, destination=others, reply=True, timeout=5.0)


def purpose_of(body: dict) -> str:
    system = next((m.get("content", "") for m in body.get("messages", []) if m.get("role") == "system"), "")
    for purpose, marker in PURPOSE_MARKERS.items():
        if system.startswith(marker):
            return purpose
    return "unknown"


@dataclass
class StubReply:
    """What the stub answers to one request. content=None: the healthy reply for the request's purpose."""

    status: int = 200
    content: str | None = None
    delay: float = 0.0
    block: threading.Event | None = None
    prompt_tokens: int = 321
    completion_tokens: int = 54


@dataclass
class ReceivedRequest:
    path: str
    headers: dict[str, str]  # names lower-cased
    body: dict

    @property
    def purpose(self) -> str:
        return purpose_of(self.body)

    def text(self) -> str:
        return "\n".join(m.get("content") or "" for m in self.body.get("messages", []))


@dataclass
class StubLLMServer:
    """An OpenAI-compatible endpoint on 127.0.0.1. Replies come from `script` (one per request, in order), then
    from the healthy defaults: `facts` for extraction, ADD for every reconciliation, `reflections`, and a merge of
    the current note and the reflections for consolidation."""

    facts: list[dict] = field(default_factory=list)
    reflections: dict[str, list[str]] = field(default_factory=lambda: {"agent": [], "user": [], "session": []})
    script: list[StubReply] = field(default_factory=list)
    requests: list[ReceivedRequest] = field(default_factory=list)
    request_arrived: threading.Event = field(default_factory=threading.Event)
    _releases: list[threading.Event] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "the stub is not running"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def then(self, *replies: StubReply) -> None:
        with self._lock:
            self.script.extend(replies)
            self._releases.extend(reply.block for reply in replies if reply.block is not None)

    def requests_for(self, purpose: str) -> list[ReceivedRequest]:
        with self._lock:
            return [request for request in self.requests if request.purpose == purpose]

    def healthy_content(self, body: dict) -> str:
        purpose = purpose_of(body)
        if purpose == "extract_facts":
            return json.dumps({"facts": self.facts})
        if purpose == "reconcile_facts":
            numbers = [int(line.split(".", 1)[0]) for line in _section(body, "NEW facts") if line[:1].isdigit()]
            return json.dumps({"decisions": [{"new": n, "action": "ADD", "reason": "new"} for n in numbers]})
        if purpose == "reflect":
            return json.dumps(self.reflections)
        if purpose == "consolidate":
            user = body["messages"][-1]["content"]
            current = user.split("Current note:", 1)[1].split("New reflections", 1)[0].strip()
            reflections = user.split("(oldest first):", 1)[1].strip()
            return json.dumps({"content": "\n".join(p for p in (current, reflections) if p and p != "(empty)")})
        return json.dumps({"error": f"the stub does not know this prompt ({purpose})"})

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = json.loads(handler.rfile.read(length) or b"{}")
        with self._lock:
            self.requests.append(
                ReceivedRequest(
                    path=handler.path, headers={k.lower(): v for k, v in handler.headers.items()}, body=body
                )
            )
            reply = self.script.pop(0) if self.script else StubReply()
        self.request_arrived.set()
        if reply.block is not None:
            reply.block.wait(120)
        if reply.delay:
            time.sleep(reply.delay)
        if handler.path.rstrip("/") != "/v1/chat/completions":
            payload, status = {"error": {"message": f"no route {handler.path}"}}, 404
        elif reply.status != 200:
            payload, status = {"error": {"message": "stub failure", "type": "server_error"}}, reply.status
        else:
            status = 200
            payload = {
                "id": f"chatcmpl-stub-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "stub"),
                "choices": [
                    {
                        "index": 0,
                        "message": {
                            "role": "assistant",
                            "content": reply.content if reply.content is not None else self.healthy_content(body),
                        },
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": reply.prompt_tokens,
                    "completion_tokens": reply.completion_tokens,
                    "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                },
            }
        data = json.dumps(payload).encode()
        with contextlib.suppress(OSError):  # the client may have given up (timeout) or died (killed worker)
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)

    @contextlib.contextmanager
    def running(self) -> Iterator[StubLLMServer]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the http.server API)
                stub.handle(self)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.block_on_close = False  # a handler still blocked must not hold up the teardown
        self._server = server
        thread = threading.Thread(target=server.serve_forever, name="stub-llm", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            for release in self._releases:
                release.set()
            server.shutdown()
            server.server_close()
            thread.join(10)


def _section(body: dict, heading: str) -> list[str]:
    """The lines after `heading` in the first user message that has it."""
    for message in body.get("messages", []):
        text = message.get("content") or ""
        if message.get("role") == "user" and heading in text:
            return text.split(heading, 1)[1].splitlines()[1:]
    return []
