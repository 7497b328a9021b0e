"""The profile's read time (facts.selectors.profile.profile_by_category, and GET /api/v1/users/{user}/profile through
Django's test client: authentication, the user's lookup, both profile reads and the rendering) at a store's size:

    .venv/bin/python -m benchmarks.profile_latency --facts 10000 100000 [--reads 300]

One throwaway embedded stack (PostgreSQL + pgvector, Redis), migrated, with one agent and 1,000 users, grown to each
size in turn (ascending) and measured there: `--facts` current user-scoped facts spread evenly over the users
(bulk_create; a profile reads no vector, so none is written), 90% filed under a category of the default set with one
of a few dozen values each, 10% not filed (formed before categories), one in five with a world time (half of them
ended), one keyed attribute per user. Then, for `--reads` users drawn at random, one read each after a warm-up: p50,
p95 and the worst, in milliseconds, and the same for GET /api/v1/users/{user} (the user's counts) as a reference
for what any read of the users API costs on the same machine at the same moment. A user holds facts / 1,000 facts
(10 at 10k, 100 at 100k, 1,000 at 1M); the profile reads at most 2,000 of them whatever the size.
Writes benchmarks/results/profile_latency.json. Every server it starts it stops; the data folder is deleted."""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

from benchmarks.lib.stack import RESULTS_DIR, machine, percentile
from devstack.services import backing_services

REPO_DIR = Path(__file__).resolve().parent.parent
USERS = 1000
BATCH = 5000
VALUES_PER_CATEGORY = 40


def agent_create() -> tuple[object, list, str]:
    """The agent, its users and its API key."""
    from agents.models import Agent, EndUser
    from agents.services.api_keys import api_key_create

    agent = Agent.objects.create(external_id="benchmark-agent", name="Benchmark agent")
    users = EndUser.objects.bulk_create([EndUser(agent=agent, external_id=f"user-{n:04d}") for n in range(USERS)])
    return agent, users, api_key_create(agent=agent, name="benchmark")[1]


def fill(*, agent, users: list, first: int, facts: int, rng: random.Random) -> None:
    """Facts number `first` to `facts` (excluded)."""
    from django.utils import timezone

    from agents.categories import DEFAULT_CATEGORY_SLUGS
    from facts.models import Fact
    from facts.services.facts import fact_content_hash

    now = timezone.now()
    for start in range(first, facts, BATCH):
        rows = []
        for number in range(start, min(start + BATCH, facts)):
            category = rng.choice(DEFAULT_CATEGORY_SLUGS) if rng.random() < 0.9 else ""
            value = f"{category} value {rng.randrange(VALUES_PER_CATEGORY)}" if category else ""
            content = f"The user's {value or 'statement'} is recorded as fact number {number}."
            fact = Fact(
                agent=agent,
                user=users[number % USERS],
                scopes=["user"],
                content=content,
                content_hash=fact_content_hash(content),
                formed_at=now,
                valid_from=now - timedelta(days=rng.randrange(1000)),
                category=category,
                category_value=value,
                key="home_city" if number < USERS else "",
            )
            if rng.random() < 0.2:  # a world time, half of them ended
                fact.held_from, fact.held_from_precision = date(2019, 1, 1) + timedelta(days=rng.randrange(900)), "day"
                if rng.random() < 0.5:
                    fact.held_until, fact.held_until_precision = fact.held_from + timedelta(days=30), "month"
            rows.append(fact)
        Fact.objects.bulk_create(rows)
        print(f"  {start + len(rows)} facts", flush=True)


def timed(reads: list, run) -> dict[str, float]:
    for item in reads[:10]:
        run(item)
    seconds = []
    for item in reads:
        started = time.perf_counter()
        run(item)
        seconds.append(time.perf_counter() - started)
    return {
        "p50_ms": round(1000 * percentile(seconds, 50), 2),
        "p95_ms": round(1000 * percentile(seconds, 95), 2),
        "max_ms": round(1000 * max(seconds), 2),
    }


def measure(*, key: str, reads: int) -> dict:
    from django.test import Client

    from agents.categories import DEFAULT_CATEGORY_SLUGS
    from agents.models import EndUser
    from facts.selectors.profile import profile_by_category

    users = list(EndUser.objects.select_related("agent").order_by("?")[:reads])
    client = Client(HTTP_AUTHORIZATION=f"Bearer {key}", SERVER_NAME="localhost")

    def selector(user: EndUser) -> None:
        profile_by_category(agent=user.agent, user=user, categories=DEFAULT_CATEGORY_SLUGS, include_history=True)

    def endpoint(user: EndUser) -> None:
        assert client.get(f"/api/v1/users/{user.external_id}/profile?include_history=true").status_code == 200

    def user_detail(user: EndUser) -> None:
        assert client.get(f"/api/v1/users/{user.external_id}").status_code == 200

    return {
        "selector": timed(users, selector),
        "endpoint": timed(users, endpoint),
        "reference_user_detail": timed(users, user_detail),
    }


def all_sizes(*, sizes: list[int], reads: int) -> list[dict]:
    (REPO_DIR / ".data").mkdir(exist_ok=True)
    data_dir = Path(tempfile.mkdtemp(prefix="bench-profile-", dir=REPO_DIR / ".data"))
    rows = []
    try:
        with backing_services(data_dir=data_dir, database="memory", durable=False) as service_env:
            os.environ.update(service_env | {"DJANGO_SETTINGS_MODULE": "memory_project.settings.test"})
            import django
            from django.core.management import call_command
            from django.db import connection

            django.setup()
            call_command("migrate", "--noinput", verbosity=0)
            rng = random.Random(7)
            agent, users, key = agent_create()
            filled = 0
            for facts in sorted(sizes):
                started = time.monotonic()
                print(f"filling to {facts} facts …", flush=True)
                fill(agent=agent, users=users, first=filled, facts=facts, rng=rng)
                filled = facts
                with connection.cursor() as cursor:
                    cursor.execute("ANALYZE")
                print(f"filled in {time.monotonic() - started:.0f} s", flush=True)
                rows.append({"facts": facts, "facts_per_user": facts // USERS, **measure(key=key, reads=reads)})
                print(rows[-1], flush=True)
            connection.close()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--facts", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--reads", type=int, default=300)
    parser.add_argument("--output", default="profile_latency.json")
    args = parser.parse_args()
    info = machine()
    rows = all_sizes(sizes=args.facts, reads=args.reads)
    print(f"\n{'facts':>9} {'per user':>9} {'read':>22} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for row in rows:
        for read in ("selector", "endpoint", "reference_user_detail"):
            cell = row[read]
            print(
                f"{row['facts']:9d} {row['facts_per_user']:9d} {read:>22} {cell['p50_ms']:8.2f} {cell['p95_ms']:8.2f} "
                f"{cell['max_ms']:8.2f}"
            )
    load = os.getloadavg()
    print(f"load average at the end: {', '.join(f'{value:.1f}' for value in load)} on {os.cpu_count()} cores")
    result = {"benchmark": "profile_latency", "machine": info, "reads": args.reads, "sizes": rows, "load": load}
    (RESULTS_DIR / args.output).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
