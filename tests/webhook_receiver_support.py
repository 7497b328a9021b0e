"""A webhook receiver on 127.0.0.1, as an application would run one: it verifies every request's Standard Webhooks
signature with its own code (not the service's), and keeps what it accepted. Tests make it answer an error for a while
(`failing`), stop listening (`down()`/`up()`), hold requests open (`hold_seconds`) or redirect (`redirect_to`)."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SIGNATURE_TOLERANCE_SECONDS = 300


def signature_valid(*, secret: str, headers: dict[str, str], body: bytes) -> bool:
    """Standard Webhooks verification, written out: HMAC-SHA256 of `id.timestamp.body` with the base64 key after
    `whsec_`, compared with every `v1,` signature of the header, and a timestamp within five minutes."""
    message_id, timestamp = headers.get("webhook-id", ""), headers.get("webhook-timestamp", "")
    if not message_id or not timestamp.isdigit() or abs(time.time() - int(timestamp)) > SIGNATURE_TOLERANCE_SECONDS:
        return False
    key = base64.b64decode(secret.split("_", 1)[1])
    expected = base64.b64encode(
        hmac.new(key, f"{message_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    ).decode()
    offered = [part.split(",", 1)[1] for part in headers.get("webhook-signature", "").split() if part.startswith("v1,")]
    return any(hmac.compare_digest(expected, signature) for signature in offered)


@dataclass
class Received:
    message_id: str
    event_type: str
    data: dict[str, Any]
    headers: dict[str, str]


@dataclass
class WebhookReceiver:
    secret: str = ""
    failing: bool = False  # answer 503 to everything
    hold_seconds: float = 0.0  # wait this long before answering
    redirect_to: str | None = None
    accepted: list[Received] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # why requests were refused (bad signature, failing)
    arrived: int = 0  # requests that reached the handler, answered or not
    port: int = 0
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/memory?source=test"

    def up(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                headers = {key.lower(): value for key, value in self.headers.items()}
                receiver.arrived += 1
                if receiver.hold_seconds:
                    time.sleep(receiver.hold_seconds)
                if receiver.redirect_to:
                    self.send_response(302)
                    self.send_header("Location", receiver.redirect_to)
                    self.end_headers()
                    return
                if receiver.failing:
                    receiver.refused.append("failing")
                    self.send_response(503)
                    self.end_headers()
                    return
                if not signature_valid(secret=receiver.secret, headers=headers, body=body):
                    receiver.refused.append(f"bad signature: {headers.get('webhook-id')}")
                    self.send_response(401)
                    self.end_headers()
                    return
                envelope = json.loads(body)
                receiver.accepted.append(
                    Received(
                        message_id=headers["webhook-id"],
                        event_type=envelope["type"],
                        data=envelope["data"],
                        headers=headers,
                    )
                )
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def down(self) -> None:
        """Stop listening: connections are refused until up() (on the same port)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def of_type(self, event_type: str) -> list[Received]:
        return [event for event in self.accepted if event.event_type == event_type]

    def wait_for(self, count: int, *, timeout: float = 30.0, event_type: str | None = None) -> list[Received]:
        """The accepted requests (of a type) once there are at least `count`; AssertionError after `timeout`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.of_type(event_type) if event_type else list(self.accepted)
            if len(found) >= count:
                return found
            time.sleep(0.05)
        raise AssertionError(f"{len(self.accepted)} events accepted, {count} expected; refused: {self.refused}")


@contextlib.contextmanager
def webhook_receiver(**options: Any) -> Iterator[WebhookReceiver]:
    receiver = WebhookReceiver(**options)
    receiver.up()
    try:
        yield receiver
    finally:
        receiver.down()
