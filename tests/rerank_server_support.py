"""A rerank server on 127.0.0.1 that stands in for a cross-encoder (no reranker's weights ship offline here): it
scores each passage by the share of the query's words it holds, and answers both shapes in use: TEI's
`POST /rerank {"query", "texts"}` -> `[{"index", "score"}]`, and Cohere's (Jina, Infinity, vLLM)
`POST /v1/rerank {"model", "query", "documents", "top_n"}` -> `{"results": [{"index", "relevance_score"}]}`.
Best first, as the real ones answer. It can misbehave as a real one does: answer late, answer 500, answer what is
not JSON, or give indexes that are not the passages'. Every request body is kept.

Tests start it in a thread (`with RerankServer().running() as server:`); the overhead benchmark as a process:

    python -m tests.rerank_server_support --port 8790"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WORD = re.compile(r"\w+")


def overlap_score(query: str, passage: str) -> float:
    """The share of the query's distinct words the passage holds (case folded): 0 to 1."""
    asked = {word.casefold() for word in WORD.findall(query)}
    held = {word.casefold() for word in WORD.findall(passage)}
    return len(asked & held) / len(asked) if asked else 0.0


@dataclass
class RerankServer:
    delay_seconds: float = 0.0
    misbehaviour: str = ""  # "", "status_500", "not_json", "wrong_indexes" or "duplicate_indexes"
    requests: list[dict[str, Any]] = field(default_factory=list)
    port: int = 0

    def url(self, path: str = "/v1/rerank") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def reply(self, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        self.requests.append({"path": path, "body": body})
        if self.delay_seconds:
            time.sleep(self.delay_seconds)
        if self.misbehaviour == "status_500":
            return 500, b'{"error": "model crashed"}'
        if self.misbehaviour == "not_json":
            return 200, b"<html>bad gateway</html>"
        tei = path.rstrip("/") == "/rerank"
        passages = body["texts"] if tei else body["documents"]
        scored = sorted(
            ((index, overlap_score(body["query"], passage)) for index, passage in enumerate(passages)),
            key=lambda row: -row[1],
        )
        if self.misbehaviour == "wrong_indexes":
            scored = [(index + len(passages), score) for index, score in scored]
        if self.misbehaviour == "duplicate_indexes":
            scored = [(scored[0][0], score) for _, score in scored]
        if tei:
            return 200, json.dumps([{"index": index, "score": score} for index, score in scored]).encode()
        top = scored[: body.get("top_n") or len(scored)]
        return 200, json.dumps({"results": [{"index": i, "relevance_score": score} for i, score in top]}).encode()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            # The connection kept alive between requests and small writes sent at once, as the real servers do
            # (without TCP_NODELAY a kept-alive reply waits on the client's delayed acknowledgement).
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                body["authorization"] = self.headers.get("Authorization")
                status, payload = server.reply(self.path, body)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a client that timed out left
                    self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    @contextlib.contextmanager
    def running(self) -> Iterator[RerankServer]:
        http = ThreadingHTTPServer(("127.0.0.1", self.port), self.handler())
        http.daemon_threads = True
        self.port = http.server_address[1]
        thread = threading.Thread(target=http.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            http.shutdown()
            http.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8790)
    parser.add_argument("--delay-seconds", type=float, default=0.0)
    arguments = parser.parse_args()
    server = RerankServer(port=arguments.port, delay_seconds=arguments.delay_seconds)
    http = ThreadingHTTPServer(("127.0.0.1", server.port), server.handler())
    http.serve_forever()


if __name__ == "__main__":
    main()
