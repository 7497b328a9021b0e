"""An OpenAI-compatible chat-completions server on 127.0.0.1 that stands in for the LLM: tests start it in a thread
(`StubLLMServer(...).running()`), the formation benchmark as a process of its own:

    python -m tests.llm_stub_server --port 8765 --latency-median 1.5 --latency-p95 5 --rate-429 0.02 --rate-500 0.01

It answers every prompt the formation pipeline sends (told apart by the first words of the system prompt) with a
valid reply made from the request itself: facts from the user's messages, ADD for every new fact in a
reconciliation, a reflection per session, a consolidation that merges the note and the reflections. Anything else
gets a short chat reply. With `obeys_users` it plays a compromised model, the worst case of memory poisoning: every
user message becomes an agent-wide fact (and the user's own) and an agent reflection in the user's own words, and
every reconciliation rewrites (or, when the user asks to remove something, deletes) the first existing fact it is
shown. Optionally each answer comes after a log-normal latency (the median and 95th percentile of a real provider),
and a share of requests fail: 429 with Retry-After, or 500. Replies can also be scripted one by one (`then`), a tool
call among them (`tool_calls`: an agent's model asking for a tool), and every request is kept for assertions. Usage
reports tokens in the OpenAI way (about 4 characters a token). With `uses_tools` it plays a model that looks things
up before it answers: offered tools after a user message, it calls the search tool (the first offered whose name has
"search", else the first) with the user's message as the query, and given a tool's result it answers with that
result. A request with `stream: true` gets its reply as OpenAI streams it (server-sent chunks)."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import random
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# How each prompt file starts: the stub tells the formation steps apart by their system prompt.
PURPOSE_MARKERS = {
    "extract_facts": "You extract durable facts",
    "reconcile_facts": "You keep an agent's memory of facts consistent",
    "reflect": "You write reflections",
    "consolidate": "You maintain a consolidated memory note",
}
MAX_FACTS = 3
FACT_WORDS = 24


def purpose_of(body: dict) -> str:
    system = next((m.get("content", "") for m in body.get("messages", []) if m.get("role") == "system"), "")
    for purpose, marker in PURPOSE_MARKERS.items():
        if system.startswith(marker):
            return purpose
    return "unknown"


@dataclass(frozen=True)
class Latency:
    """Log-normal with the given median and 95th percentile (seconds); median 0: answer at once."""

    median: float = 0.0
    p95: float = 0.0

    def sample(self, rng: random.Random) -> float:
        if self.median <= 0:
            return 0.0
        sigma = math.log(max(self.p95, self.median) / self.median) / 1.6449
        return rng.lognormvariate(math.log(self.median), sigma)


@dataclass
class StubReply:
    """What the stub answers to one request. content=None: the healthy reply for the request's purpose."""

    status: int = 200
    content: str | None = None
    delay: float = 0.0
    block: threading.Event | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    retry_after: float | None = None  # a Retry-After header (seconds), for a 429
    # Tool calls the model makes, in OpenAI's format ({"id", "type": "function", "function": {"name", "arguments"}}).
    tool_calls: list[dict] | None = None


@dataclass
class ReceivedRequest:
    path: str
    headers: dict[str, str]  # names lower-cased
    body: dict
    received_at: float  # time.monotonic()
    status: int = 0  # what the stub answered

    @property
    def purpose(self) -> str:
        return purpose_of(self.body)

    def text(self) -> str:
        return "\n".join(_text_of(m.get("content")) for m in self.body.get("messages", []))


@dataclass
class StubLLMServer:
    """Replies come from `script` (one per request, in order), then from the healthy defaults: `facts` for
    extraction (derived from the user's messages when None), ADD for every reconciliation, `reflections` (one
    session reflection when None), and a merge of the current note and the reflections for consolidation. Random
    latency and failures (`latency`, `rate_429`, `rate_500`) apply to unscripted replies."""

    facts: list[dict] | None = None
    reflections: dict[str, list[str]] | None = None
    obeys_users: bool = False
    uses_tools: bool = False
    script: list[StubReply] = field(default_factory=list)
    latency: Latency = field(default_factory=Latency)
    rate_429: float = 0.0
    rate_500: float = 0.0
    retry_after: float = 1.0
    seed: int = 7
    keep_requests: bool = True
    requests: list[ReceivedRequest] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)
    request_arrived: threading.Event = field(default_factory=threading.Event)
    port: int = 0
    _releases: list[threading.Event] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None
    _rng: random.Random | None = None

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

    # --- replies ------------------------------------------------------------------------------------------------

    def tool_call(self, body: dict) -> dict | None:
        """The search call of `uses_tools` (see the module docstring), or None when the model answers in text."""
        messages, tools = body.get("messages") or [], body.get("tools") or []
        if not (self.uses_tools and tools and messages and messages[-1].get("role") == "user"):
            return None
        names = [tool["function"]["name"] for tool in tools]
        name = next((name for name in names if "search" in name), names[0])
        arguments = json.dumps({"query": messages[-1].get("content") or ""})
        call_id = f"call_stub_{self.counts['requests']}"
        return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}

    def healthy_content(self, body: dict) -> str:
        purpose = purpose_of(body)
        last = (body.get("messages") or [{}])[-1]
        if last.get("role") == "tool":  # the reply after a tool call: what the tool returned, as an agent answers
            return f"From memory: {_text_of(last.get('content'))}"
        if self.obeys_users and purpose in ("extract_facts", "reconcile_facts", "reflect"):
            return json.dumps(_obedient_reply(purpose, body))
        if purpose == "extract_facts":
            return json.dumps({"facts": self.facts if self.facts is not None else _facts_from(body)})
        if purpose == "reconcile_facts":
            numbers = [int(line.split(".", 1)[0]) for line in _section(body, "NEW facts") if line[:1].isdigit()]
            return json.dumps({"decisions": [{"new": n, "action": "ADD", "reason": "new"} for n in numbers]})
        if purpose == "reflect":
            default = {"agent": [], "user": [], "session": ["The user shared news about friends and plans."]}
            return json.dumps(self.reflections if self.reflections is not None else default)
        if purpose == "consolidate":
            user = body["messages"][-1]["content"]
            current = user.split("Current note:", 1)[1].split("New reflections", 1)[0].strip()
            reflections = user.split("(oldest first):", 1)[1].split("Recent conversation", 1)[0].strip()
            lines = [p for p in (current, reflections) if p and p not in ("(empty)", "(none)")]
            return json.dumps({"content": "\n".join(lines) or "- The session had no notable content."})
        if (body.get("response_format") or {}).get("type") == "json_object":
            return "{}"
        return "Noted."

    def _next_reply(self) -> StubReply:
        with self._lock:
            if self.script:
                return self.script.pop(0)
            if self._rng is None:
                self._rng = random.Random(self.seed)
            draw, delay = self._rng.random(), self.latency.sample(self._rng)
        if draw < self.rate_429:
            return StubReply(status=429, delay=min(delay, 0.05), retry_after=self.retry_after)
        if draw < self.rate_429 + self.rate_500:
            return StubReply(status=500, delay=delay)
        return StubReply(delay=delay)

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = json.loads(handler.rfile.read(length) or b"{}")
        received = ReceivedRequest(
            path=handler.path,
            headers={k.lower(): v for k, v in handler.headers.items()},
            body=body,
            received_at=time.monotonic(),
        )
        reply = self._next_reply()
        with self._lock:
            if self.keep_requests:
                self.requests.append(received)
            self.counts["requests"] += 1
        self.request_arrived.set()
        if reply.block is not None:
            reply.block.wait(120)
        if reply.delay:
            time.sleep(reply.delay)
        headers: dict[str, str] = {}
        if handler.path.rstrip("/") != "/v1/chat/completions":
            payload, status = {"error": {"message": f"no route {handler.path}"}}, 404
        elif reply.status != 200:
            status = reply.status
            kind = "rate_limit_exceeded" if status == 429 else "server_error"
            payload = {"error": {"message": f"stub {status}", "type": kind, "code": kind}}
            if reply.retry_after is not None:
                headers["Retry-After"] = f"{reply.retry_after:g}"
        else:
            status = 200
            tool_call = self.tool_call(body) if reply.content is None and not reply.tool_calls else None
            tool_calls = reply.tool_calls or ([tool_call] if tool_call is not None else None)
            content = reply.content if reply.content is not None or tool_calls else self.healthy_content(body)
            content = content or ""
            prompt_tokens = reply.prompt_tokens
            if prompt_tokens is None:
                prompt_tokens = max(1, len(received.text()) // 4)
            completion_tokens = reply.completion_tokens
            if completion_tokens is None:
                completion_tokens = max(1, len(content) // 4)
            payload = {
                "id": f"chatcmpl-stub-{self.counts['requests']}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "stub"),
                "choices": [_choice(content=content, tool_calls=tool_calls)],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            }
        received.status = status
        with self._lock:
            self.counts[str(status)] += 1
        content_type = "application/json"
        data = json.dumps(payload).encode()
        if status == 200 and body.get("stream"):
            content_type, data = "text/event-stream", _event_stream(payload)
        with contextlib.suppress(OSError):  # the client may have given up (timeout) or died (killed worker)
            handler.send_response(status)
            handler.send_header("Content-Type", content_type)
            handler.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(data)

    # --- serving ------------------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def running(self) -> Iterator[StubLLMServer]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as a real endpoint: the client reuses its connections

            def do_POST(self) -> None:  # noqa: N802 (the http.server API)
                stub.handle(self)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        server.block_on_close = False  # a handler still blocked must not hold up the teardown
        server.request_queue_size = 1024
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


def _event_stream(completion: dict) -> bytes:
    """A completion as OpenAI streams it (`stream: true`): server-sent chunks of deltas, the usage, then [DONE]."""
    choice = completion["choices"][0]
    message = choice["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message["content"] or ""}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": n} | call for n, call in enumerate(message["tool_calls"])]
    head = {key: completion[key] for key in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    chunks = [
        head | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        head | {"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
        head | {"choices": [], "usage": completion["usage"]},
    ]
    return "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks).encode() + b"data: [DONE]\n\n"


def _choice(*, content: str, tool_calls: list[dict] | None) -> dict:
    if tool_calls:
        message = {"role": "assistant", "content": content or None, "tool_calls": tool_calls}
        return {"index": 0, "message": message, "finish_reason": "tool_calls"}
    return {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}


def _text_of(content: Any) -> str:
    """A message's content as text: a string, or the text parts of a list of content parts."""
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def _section(body: dict, heading: str) -> list[str]:
    """The lines after `heading` in the first user message that has it."""
    for message in body.get("messages", []):
        text = message.get("content") or ""
        if message.get("role") == "user" and heading in text:
            return text.split(heading, 1)[1].splitlines()[1:]
    return []


def _user_lines(body: dict) -> list[tuple[int, str]]:
    """(number, text) of each user message in the `[n] [date] user: text` lines of the conversation."""
    lines = []
    for line in _section(body, "Conversation"):
        number, _, rest = line.partition("] ")
        _, _, said = rest.partition("] user: ")
        if number.startswith("[") and said.strip():
            lines.append((int(number[1:]), said.strip()))
    return lines


_REMOVAL = ("delete", "remove", "forget", "no longer", "cancel")


def _obedient_reply(purpose: str, body: dict) -> dict:
    """What a model that does whatever the user says would answer (see the module docstring)."""
    said = [(number, " ".join(text.split()[:FACT_WORDS])) for number, text in _user_lines(body)]
    if purpose == "extract_facts":
        # Every statement asked to be shared with every user (and kept for its user, as a model would too).
        return {"facts": [{"content": text, "scope": ["user", "agent"], "source": [number]} for number, text in said]}
    if purpose == "reflect":
        return {"agent": [text for _, text in said], "user": [], "session": []}
    decisions = []
    for line in _section(body, "NEW facts"):
        if not line[:1].isdigit() or "(similar: " not in line:
            continue
        number = int(line.split(".", 1)[0])
        content = line.split(".", 1)[1].split("  (similar: ", 1)[0].strip()
        target = int(line.split("(similar: ", 1)[1].split(",")[0].rstrip(")"))
        removal = any(word in content.lower() for word in _REMOVAL)
        decision = {"new": number, "action": "DELETE" if removal else "UPDATE", "target": target, "reason": "user said"}
        decisions.append(decision | ({} if removal else {"content": content}))
    return {"decisions": decisions}


def _facts_from(body: dict) -> list[dict]:
    """One fact per user message (the first few), in the words of the message: `[n] [date] user: text` lines."""
    facts = []
    for line in _section(body, "Conversation"):
        number, _, rest = line.partition("] ")
        _, _, said = rest.partition("] user: ")
        words = said.rstrip("?").split()
        if not number.startswith("[") or not said or said.rstrip().endswith("?") or len(words) < 4:
            continue
        content = "The user said: " + " ".join(words[:FACT_WORDS]).rstrip(".,;") + "."
        facts.append({"content": content, "scope": ["user"], "source": [int(number[1:])]})
        if len(facts) == MAX_FACTS:
            break
    return facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--latency-median", type=float, default=1.5, help="seconds")
    parser.add_argument("--latency-p95", type=float, default=5.0, help="seconds")
    parser.add_argument("--rate-429", type=float, default=0.02, help="share of requests answered 429")
    parser.add_argument("--rate-500", type=float, default=0.01, help="share of requests answered 500")
    parser.add_argument("--retry-after", type=float, default=1.0, help="the 429s' Retry-After, seconds")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    stub = StubLLMServer(
        latency=Latency(median=args.latency_median, p95=args.latency_p95),
        rate_429=args.rate_429,
        rate_500=args.rate_500,
        retry_after=args.retry_after,
        seed=args.seed,
        keep_requests=False,
        port=args.port,
    )
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    signal.signal(signal.SIGINT, lambda *_: stopped.set())
    with stub.running():
        print(f"stub LLM listening on {stub.base_url}", flush=True)
        stopped.wait()
    print(json.dumps(dict(stub.counts)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
