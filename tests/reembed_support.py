"""What the re-embedding tests share (tests/portability/test_command_reembed.py and
tests/agents/test_request_path_cache.py): an OpenAI-compatible embeddings endpoint on 127.0.0.1 that embeds by
hashed bag of words (EmbeddingStub, which the `embedding_stub` fixture of tests/conftest.py starts), memory to
re-embed, and the `reembed` command run to the stub's model."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO

import numpy as np
from django.core.management import call_command

from agents.models import Agent, EndUser
from conversations.models import Message, Session
from conversations.services.message_embeddings import messages_embed_missing
from facts.services.facts import fact_create
from tests.factories import SessionFactory

STUB_MODEL = "bag-of-words"
STUB_DIMENSIONS = 96
MARKER = "The office cat is named Miso"
QUERY = "What is the office cat named?"
TOPICS = ["gardening", "invoices", "bicycles", "volcanoes", "chess", "pottery", "sailing", "astronomy", "baking"]


def bag_of_words_vector(text: str, dimensions: int) -> np.ndarray:
    vector = np.zeros(dimensions, dtype=np.float32)
    for word in re.findall(r"[a-z]+", text.lower()):
        vector[int(hashlib.sha1(word.encode()).hexdigest(), 16) % dimensions] += 1.0
    return vector / (np.linalg.norm(vector) or 1.0)


class EmbeddingStub:
    """OpenAI-compatible POST /v1/embeddings. `fail_after` makes it answer 500 once that many requests were served,
    standing in for a crash of the provider half-way through."""

    def __init__(self) -> None:
        self.texts_embedded = 0
        self.requests = 0
        self.fail_after: int | None = None
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if stub.fail_after is not None and stub.requests >= stub.fail_after:
                    self.send_response(500)
                    self.end_headers()
                    return
                stub.requests += 1
                time.sleep(0.02)
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                stub.texts_embedded += len(inputs)
                data = []
                for index, text in enumerate(inputs):
                    vector = bag_of_words_vector(text, body["dimensions"])
                    encoded = (
                        base64.b64encode(vector.astype("<f4").tobytes()).decode()
                        if body.get("encoding_format") == "base64"
                        else vector.tolist()
                    )
                    data.append({"object": "embedding", "index": index, "embedding": encoded})
                payload = json.dumps(
                    {
                        "object": "list",
                        "data": data,
                        "model": body["model"],
                        "usage": {"prompt_tokens": 0, "total_tokens": 0},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


def memory_to_reembed_create(agent: Agent, user: EndUser) -> Session:
    """An agent-wide fact (MARKER) among 40 of the user's, and a session of 12 messages, 10 of them embedded."""
    fact_create(agent=agent, user=None, scopes=["agent"], content=MARKER)
    for i in range(40):
        topic = TOPICS[i % len(TOPICS)]
        fact_create(agent=agent, user=user, scopes=["user"], content=f"Note {i} about {topic} and {topic} supplies")
    session = SessionFactory(user=user, external_id="s-reembed")
    messages = Message.objects.bulk_create(
        [Message(session=session, role="user", content=f"Message {i} about {TOPICS[i % 9]}") for i in range(12)]
    )
    messages_embed_missing(message_ids=[m.pk for m in messages[:10]])  # two are never embedded
    return session


def reembed_to_stub(*extra: str) -> str:
    """`reembed` to the stub's model (STUB_DIMENSIONS), in batches of 8; its output."""
    out = StringIO()
    call_command(
        "reembed",
        "--provider",
        "openai",
        "--model",
        STUB_MODEL,
        "--dimensions",
        str(STUB_DIMENSIONS),
        "--batch-size",
        "8",
        *extra,
        stdout=out,
    )
    return out.getvalue()
