"""Render time of the admin's biggest list pages, facts and messages, with 100k rows each:

    .venv/bin/python -m benchmarks.admin_list_pages [--rows 100000] [--runs 9]

Starts a throwaway embedded stack (PostgreSQL + pgvector, Redis), migrates, fills one agent with 1,000 users, 1,000
sessions, `--rows` messages and `--rows` user-scoped facts (bulk_create, each with a random unit vector of the
active embedding space, so the embedding tables are as big as in production; their HNSW indexes, which no list page
reads, are dropped to keep the fill short), then renders each page with Django's test client as a logged-in
superuser: two warm-up renders, then the median and the worst of `--runs` renders, and the number of SQL queries of
one render. Settings are the production-like ones of the test settings (DEBUG off).
Every server it starts it stops; the data folder is deleted. Goal (docs/admin.md): every page under 300 ms."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from devstack.services import backing_services

REPO_DIR = Path(__file__).resolve().parent.parent

USERS = 1000
BATCH = 5000
WORDS = [
    "the",
    "user",
    "likes",
    "travels",
    "works",
    "lives",
    "in",
    "Paris",
    "Lyon",
    "Berlin",
    "nurse",
    "teacher",
    "cat",
    "dog",
    "coffee",
    "tea",
    "music",
    "jazz",
    "running",
    "garden",
    "book",
    "film",
    "sister",
    "brother",
    "birthday",
    "March",
    "April",
    "weekend",
    "project",
    "deadline",
    "allergy",
    "peanuts",
    "vegetarian",
]
LIST_PER_PAGE = 100


def list_pages(*, rows: int) -> list[tuple[str, str]]:
    middle = max(rows // LIST_PER_PAGE // 2, 1)
    return [
        ("facts, first page", "/admin/facts/fact/"),
        (f"facts, page {middle}", f"/admin/facts/fact/?p={middle}"),
        ("facts, current of one user", "/admin/facts/fact/?status=current&user=user-0421"),
        ("facts, full-text search", "/admin/facts/fact/?q=nurse+Lyon"),
        ("facts, tag filter", "/admin/facts/fact/?tag=imported"),
        ("messages, first page", "/admin/conversations/message/"),
        (f"messages, page {middle}", f"/admin/conversations/message/?p={middle}"),
        ("messages, role filter", "/admin/conversations/message/?role__exact=assistant"),
        ("messages, of one session", "/admin/conversations/message/?session_external_id=session-0421"),
    ]


def random_text(rng: np.random.Generator, words: int) -> str:
    return " ".join(rng.choice(WORDS, size=words)).capitalize() + "."


def unit_vectors(rng: np.random.Generator, count: int, dimensions: int) -> np.ndarray:
    vectors = rng.standard_normal((count, dimensions)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def fill(*, rows: int, rng: np.random.Generator) -> None:
    from django.utils import timezone

    from agents.models import Agent, EndUser
    from conversations.models import Message, MessageEmbedding, Session
    from core.embeddings.spaces import embedding_space_active
    from facts.models import Fact, FactEmbedding
    from facts.services.facts import fact_content_hash

    space = embedding_space_active()
    agent = Agent.objects.create(external_id="benchmark-agent", name="Benchmark agent")
    users = EndUser.objects.bulk_create([EndUser(agent=agent, external_id=f"user-{n:04d}") for n in range(USERS)])
    sessions = Session.objects.bulk_create(
        [Session(agent=agent, user=user, external_id=f"session-{n:04d}") for n, user in enumerate(users)]
    )
    now = timezone.now()
    for start in range(0, rows, BATCH):
        count = min(BATCH, rows - start)
        messages = Message.objects.bulk_create(
            [
                Message(
                    session=sessions[(start + n) % USERS],
                    role="user" if n % 2 == 0 else "assistant",
                    content=random_text(rng, 40),
                    token_count=48,
                )
                for n in range(count)
            ]
        )
        MessageEmbedding.objects.bulk_create(
            [
                MessageEmbedding(
                    message=message,
                    space=space,
                    agent=agent,
                    user_id=message.session.user_id,
                    session=message.session,
                    embedding=vector,
                )
                for message, vector in zip(messages, unit_vectors(rng, count, space.dimensions), strict=True)
            ]
        )
        facts = Fact.objects.bulk_create(
            [
                Fact(
                    agent=agent,
                    user=users[(start + n) % USERS],
                    scopes=["user"],
                    content=(content := f"{random_text(rng, 12)[:-1]} #{start + n}."),
                    content_hash=fact_content_hash(content),
                    formed_at=now,
                    valid_from=now,
                    source_session=sessions[(start + n) % USERS],
                    tags=["imported"] if n % 10 == 0 else [],
                )
                for n in range(count)
            ]
        )
        FactEmbedding.objects.bulk_create(
            [
                FactEmbedding(
                    fact=fact,
                    space=space,
                    agent=agent,
                    restricted_to_user_id=fact.restricted_to_user_id,
                    embedding=vector,
                )
                for fact, vector in zip(facts, unit_vectors(rng, count, space.dimensions), strict=True)
            ]
        )
        print(f"  {start + count} facts and messages", flush=True)
    Session.objects.update(message_count=rows // USERS)


def measure(*, rows: int, runs: int) -> list[tuple[str, float, float, int, float]]:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    operator = get_user_model().objects.create_superuser("benchmark", email="", password="benchmark-password")
    client = Client(SERVER_NAME="localhost")
    client.force_login(operator)
    results = []
    for label, url in list_pages(rows=rows):
        for _ in range(2):
            assert client.get(url).status_code == 200, url
        timings = []
        for _ in range(runs):
            started = time.perf_counter()
            response = client.get(url)
            timings.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, url
        with CaptureQueriesContext(connection) as queries:
            client.get(url)
        sql_ms = sum(float(query["time"]) for query in queries.captured_queries) * 1000
        results.append((label, statistics.median(timings), max(timings), len(queries), sql_ms))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    (REPO_DIR / ".data").mkdir(exist_ok=True)
    data_dir = Path(tempfile.mkdtemp(prefix="bench-admin-", dir=REPO_DIR / ".data"))
    try:
        with backing_services(data_dir=data_dir, database="memory", durable=False) as service_env:
            os.environ.update(service_env | {"DJANGO_SETTINGS_MODULE": "memory_project.settings.test"})
            import django
            from django.core.management import call_command
            from django.db import connection

            django.setup()
            call_command("migrate", "--noinput", verbosity=0)
            started = time.monotonic()
            print(f"filling {args.rows} facts and {args.rows} messages …", flush=True)
            fill(rows=args.rows, rng=np.random.default_rng(7))
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
            print(f"filled in {time.monotonic() - started:.0f} s\n")
            results = measure(rows=args.rows, runs=args.runs)
            connection.close()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    print(f"{'page':32} {'median ms':>10} {'worst ms':>9} {'queries':>8} {'of which SQL ms':>16}")
    for label, median, worst, queries, sql_ms in results:
        print(f"{label:32} {median:10.1f} {worst:9.1f} {queries:8d} {sql_ms:16.1f}")
    print(f"load average at the end: {', '.join(f'{load:.1f}' for load in os.getloadavg())} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
