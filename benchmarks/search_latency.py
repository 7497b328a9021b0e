"""Fact search latency and throughput at 10k, 100k and 1M facts, through HTTP with the Python client.

    .venv/bin/python -m benchmarks.search_latency --scales 10000              # the `make bench` version
    .venv/bin/python -m benchmarks.search_latency --scales 10000 100000 1000000 --repeats 3

One throwaway stack (benchmarks/lib/stack.py), grown scale by scale: 10 agents with 1,000 users each, every user with
the same number of generated facts (benchmarks/lib/synthetic_facts.py: composed vectors, see there and
docs/benchmarks/method.md). A tenth of the facts are shared agent-wide (scopes user + agent, as imports and formation
write facts about a user that every conversation may see); the rest are the user's own. The store is loaded with COPY
(what the service writes per fact, minus the LLM) and the space's HNSW index rebuilt at each scale, then:

- per-user search (`user` given: the user's own facts, exact scan, plus the agent-wide ones) and agent-wide search
  (no `user`), hybrid mode (the default), top 10, questions about random subjects, embedded by the server
  (query embedding included): p50/p95/p99 at concurrency 1 and 8, and searches per second;
- recall@10 of the agent-wide HNSW scan against an exact scan of the same rows, at several ef_search values;
- RSS of the web server (gunicorn master and workers) and of an idle Celery worker.
With --graph, every user also has the entity graph formation would give these facts (benchmarks: graph_rows): an
entity per subject (the user by name, and their sister, partner, ... each known by "<name>'s sister"), each tied to
the user (`sister_of`), and one relation per fact from its subject to the value it states (for 14% of the facts,
to another of the user's entities instead), linked to the fact; the questions name those subjects, so the graph
signal (MEMORY_GRAPH_WEIGHT; 0 to compare without) walks them.
Writes benchmarks/results/search_latency.json."""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from pgvector.psycopg import register_vector

from benchmarks.lib.client import MemoryClient
from benchmarks.lib.stack import RESULTS_DIR, machine, percentile, throwaway_stack
from benchmarks.lib.synthetic_facts import FactGenerator, composed_vectors, composition_fidelity

REPO_DIR = Path(__file__).resolve().parent.parent

AGENTS = 10
ENTITY_JOIN_FRACTION = 0.14  # --graph: the facts whose relation joins two entities
USERS_PER_AGENT = 1000
SHARED_FRACTION = 0.1
EF_SEARCH_VALUES = (40, 100, 200, 400)
POOL_CACHE = REPO_DIR / ".data" / "bench-cache"


class Store:
    """The generated store, grown in place: facts are appended per user up to the requested total."""

    def __init__(self, stack, *, seed: int, predicates: int, graph: bool = False) -> None:
        import django

        os.environ.update(stack.env)
        django.setup()
        from core.embeddings.spaces import embedding_provider_for_space, embedding_space_active

        self.stack = stack
        self.rng = np.random.default_rng(seed)
        self.generator = FactGenerator(seed=seed, predicate_pool=predicates, users_per_agent=USERS_PER_AGENT)
        self.space = embedding_space_active()
        self.embedder = embedding_provider_for_space(space=self.space)
        self._users()
        self._pools()
        self.facts_per_user = 0
        self.load_seconds = 0.0
        self.graph = graph
        self.subject_entity: dict[tuple[int, int], int] = {}  # (agent index, subject index) -> entity id
        self.relation_ids: dict[tuple, int] = {}  # (subject, predicate, object entity, value) -> relation id

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.stack(self.embedder.embed(texts))

    def embed_cached(self, texts: list[str]) -> np.ndarray:
        """The pools are the same for a given seed and size: their vectors are kept under .data/ between runs."""
        key = hashlib.sha256("\n".join([self.space.name, *texts]).encode()).hexdigest()[:32]
        path = POOL_CACHE / f"{key}.npy"
        if path.exists():
            return np.load(path)
        vectors = self.embed(texts)
        POOL_CACHE.mkdir(parents=True, exist_ok=True)
        np.save(path, vectors)
        return vectors

    def _users(self) -> None:
        from agents.models import Agent, EndUser
        from agents.services.api_keys import api_key_create

        self.agent_ids = []
        self.keys = []
        self.user_ids = []  # [agent][user index] -> EndUser pk
        for a in range(AGENTS):
            agent = Agent.objects.create(external_id=f"bench-agent-{a}")
            self.keys.append(api_key_create(agent=agent, name="benchmark")[1])
            EndUser.objects.bulk_create(
                [EndUser(agent=agent, external_id=f"user-{u}") for u in range(USERS_PER_AGENT)], batch_size=1000
            )
            by_external = dict(EndUser.objects.filter(agent=agent).values_list("external_id", "pk"))
            self.agent_ids.append(agent.pk)
            self.user_ids.append([by_external[f"user-{u}"] for u in range(USERS_PER_AGENT)])

    def _pools(self) -> None:
        """Embed every subject and predicate once, for real."""
        started = time.monotonic()
        self.subjects = []
        self.user_subjects = []  # per user index: indices into self.subjects
        for u in range(USERS_PER_AGENT):
            names = self.generator.subjects_for_user(u)
            self.user_subjects.append(list(range(len(self.subjects), len(self.subjects) + len(names))))
            self.subjects += names
        predicates = self.generator.predicates
        print(f"embedding {len(self.subjects)} subjects and {len(predicates)} predicates ...", flush=True)
        self.subject_vectors = self.embed_cached(self.subjects)
        self.predicate_vectors = self.embed_cached(predicates)
        from core.llm.tokens import count_tokens_batch

        self.subject_tokens = np.asarray(count_tokens_batch(self.subjects), dtype=np.float32)
        self.predicate_tokens = np.asarray(count_tokens_batch(predicates), dtype=np.float32)
        self.pool_seconds = time.monotonic() - started
        sample = [
            (int(self.rng.integers(len(self.subjects))), int(self.rng.integers(len(predicates)))) for _ in range(300)
        ]
        pairs = np.asarray(sample)
        sentences = [f"{self.subjects[s]} {predicates[p]}" for s, p in sample]
        self.fidelity = composition_fidelity(embed=self.embed, sentences=sentences, composed=self._compose(pairs))
        print(f"pools embedded in {self.pool_seconds:.0f}s; composed vs real cosine {self.fidelity}", flush=True)

    def _compose(self, pairs: np.ndarray) -> np.ndarray:
        return composed_vectors(
            subject_vectors=self.subject_vectors,
            predicate_vectors=self.predicate_vectors,
            subject_tokens=self.subject_tokens,
            predicate_tokens=self.predicate_tokens,
            pairs=pairs,
        )

    def grow(self, total: int) -> None:
        """Append facts so that every user of every agent has total / 10,000 of them; rebuild the HNSW index."""
        from django.db import connection

        from core.services import corpus_statistics_fold
        from facts.services.vector_indexes import fact_vector_indexes_maintain

        per_user = total // (AGENTS * USERS_PER_AGENT)
        add = per_user - self.facts_per_user
        if add <= 0:
            return
        started = time.monotonic()
        with connection.cursor() as cursor:
            cursor.execute("SELECT coalesce(max(id), 0) FROM facts_fact")
            next_id = cursor.fetchone()[0] + 1
        now = datetime.now(UTC).isoformat()
        other_columns, other_values = _fact_defaults()
        predicates = self.generator.predicates
        for a in range(AGENTS):
            n = USERS_PER_AGENT * add
            users = np.repeat(np.arange(USERS_PER_AGENT), add)
            # Half of a user's facts are about the user, the rest about people and pets around them.
            own = self.rng.random(n) < 0.5
            subject_choice = self.rng.integers(1, len(self.user_subjects[0]), n)
            subjects = np.asarray(
                [self.user_subjects[u][0 if o else c] for u, o, c in zip(users, own, subject_choice, strict=True)]
            )
            pairs = np.stack([subjects, self.rng.integers(len(predicates), size=n)], axis=1)
            vectors = self._compose(pairs)
            shared = self.rng.random(n) < SHARED_FRACTION
            facts = io.StringIO()
            for i in range(n):
                content = f"{self.subjects[pairs[i, 0]]} {predicates[pairs[i, 1]]}"
                scopes = "{user,agent}" if shared[i] else "{user}"
                content_hash = uuid.uuid4().hex  # unique per fact: the generated store has repeats by chance
                facts.write(
                    f"{next_id + i}\t{self.agent_ids[a]}\t{self.user_ids[a][users[i]]}\t{scopes}\t{content}\t"
                    f"{content_hash}\t{uuid.uuid4()}\t1\t{now}\t{now}\tgenerated\t{other_values}\n"
                )
            # Vectors go in COPY's binary format (pgvector's psycopg adapter, registered before the cursor exists):
            # formatting 384 floats as text per row would dominate the load at 1M.
            connection.ensure_connection()
            register_vector(connection.connection)
            with connection.cursor() as cursor:
                with cursor.copy(f"COPY facts_fact ({', '.join(FACT_COLUMNS + other_columns)}) FROM STDIN") as copy:
                    copy.write(facts.getvalue())
                with cursor.copy(
                    "COPY facts_factembedding (fact_id, space_id, agent_id, restricted_to_user_id, embedding) "
                    "FROM STDIN WITH (FORMAT BINARY)"
                ) as copy:
                    copy.set_types(["int8", "int8", "int8", "int8", "vector"])
                    for i in range(n):
                        restricted = None if shared[i] else self.user_ids[a][users[i]]
                        copy.write_row((next_id + i, self.space.pk, self.agent_ids[a], restricted, vectors[i]))
            if self.graph:
                self._graph_rows(a, fact_ids=range(next_id, next_id + n), pairs=pairs, users=users)
            next_id += n
            print(f"  agent {a}: +{n} facts ({time.monotonic() - started:.0f}s)", flush=True)
        with connection.cursor() as cursor:
            cursor.execute("SELECT setval(pg_get_serial_sequence('facts_fact', 'id'), %s)", [next_id])
            cursor.execute("VACUUM ANALYZE facts_fact")
            cursor.execute("VACUUM ANALYZE facts_factembedding")
            if self.graph:
                for table in ("facts_entity", "facts_relation", "facts_relation_source_facts"):
                    cursor.execute(f"VACUUM ANALYZE {table}")
        corpus_statistics_fold()
        self.load_seconds = time.monotonic() - started
        # What the beat job does in production: agents past MEMORY_SEARCH_HNSW_MIN_SHARED_FACTS get their index.
        started = time.monotonic()
        self.indexes_built = fact_vector_indexes_maintain(space=self.space).built
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE facts_factembedding")
        self.index_seconds = time.monotonic() - started
        self.facts_per_user = per_user
        print(
            f"store at {total} facts: load {self.load_seconds:.0f}s, per-agent HNSW indexes "
            f"{len(self.indexes_built)} built in {self.index_seconds:.0f}s",
            flush=True,
        )

    def _graph_rows(self, a: int, *, fact_ids: range, pairs: np.ndarray, users: np.ndarray) -> None:
        """The agent's entities on first use (each user's subjects, the people tied to the user), then a relation per
        new fact, subject to the value it states, linked to it; COPY, like the facts."""
        from django.db import connection

        from facts.services.graph import entity_name_normalize

        now = datetime.now(UTC).isoformat()
        with connection.cursor() as cursor:
            if not any(key[0] == a for key in self.subject_entity):
                cursor.execute("SELECT coalesce(max(id), 0) + 1 FROM facts_entity")
                entity_id = cursor.fetchone()[0]
                entities, ties = io.StringIO(), []
                for u in range(USERS_PER_AGENT):
                    owner_id = entity_id
                    for place, subject in enumerate(self.user_subjects[u]):
                        name = self.subjects[subject]
                        alias = _copy_text(entity_name_normalize(name))
                        entity_type = "thing" if name.endswith("dog") else "person"
                        entities.write(
                            f"{entity_id}\t{self.agent_ids[a]}\t{self.user_ids[a][u]}\t{_copy_text(name)}\t"
                            f'{entity_type}\t{{"{alias}"}}\tf\t{NULL}\t{now}\t{now}\n'
                        )
                        self.subject_entity[(a, subject)] = entity_id
                        if place:
                            ties.append((u, entity_id, owner_id, name.rsplit("'s ", 1)[1].replace(" ", "_") + "_of"))
                        entity_id += 1
                with cursor.copy(
                    "COPY facts_entity (id, agent_id, user_id, name, entity_type, aliases, is_user, merged_into_id, "
                    "created_at, updated_at) FROM STDIN"
                ) as copy:
                    copy.write(entities.getvalue())
                cursor.execute("SELECT setval(pg_get_serial_sequence('facts_entity', 'id'), %s)", [entity_id])
                self._relations_copy(
                    cursor,
                    a,
                    [
                        (self.user_ids[a][u], subject, predicate, target, "", None)
                        for u, subject, target, predicate in ties
                    ],
                )
            predicates = self.generator.predicates
            # As in a formed graph (LoCoMo conv-26: 27 of 192 relations), a share of the facts join two entities, here
            # the fact's subject and another of the user's people; the rest state a value.
            joins = self.rng.random(len(fact_ids)) < ENTITY_JOIN_FRACTION
            others = self.rng.integers(1, len(self.user_subjects[0]), len(fact_ids))
            rows = []
            for i, fact_id in enumerate(fact_ids):
                subject = int(pairs[i, 0])
                predicate, _, value = predicates[pairs[i, 1]].partition(" ")
                target = None
                if joins[i]:
                    own = self.user_subjects[users[i]]
                    other = own[(own.index(subject) + others[i]) % len(own)]
                    target, value = self.subject_entity[(a, other)], ""
                rows.append(
                    (
                        self.user_ids[a][users[i]],
                        self.subject_entity[(a, subject)],
                        predicate,
                        target,
                        value[:300],
                        fact_id,
                    )
                )
            self._relations_copy(cursor, a, rows)

    def _relations_copy(self, cursor, a: int, rows: list[tuple]) -> None:
        """(user id, subject entity, predicate, object entity or None, object value, fact id or None) rows: a
        relation once while current (a repeated statement links one more fact to it), linked to its fact."""
        now = datetime.now(UTC).isoformat()
        cursor.execute("SELECT coalesce(max(id), 0) + 1 FROM facts_relation")
        next_id = cursor.fetchone()[0]
        relations, links = io.StringIO(), io.StringIO()
        for user_id, subject, predicate, target, value, fact_id in rows:
            key = (subject, predicate, target, value)
            if key not in self.relation_ids:
                self.relation_ids[key] = next_id
                target_text = str(target) if target is not None else NULL
                relations.write(
                    f"{next_id}\t{self.agent_ids[a]}\t{user_id}\t{subject}\t{_copy_text(predicate)}\t"
                    f"{target_text}\t{_copy_text(value)}\t{now}\t{now}\t{NULL}\t\n"
                )
                next_id += 1
            if fact_id is not None:
                links.write(f"{self.relation_ids[key]}\t{fact_id}\n")
        with cursor.copy(
            "COPY facts_relation (id, agent_id, user_id, subject_id, predicate, object_entity_id, object_value, "
            "formed_at, valid_from, valid_to, closed_reason) FROM STDIN"
        ) as copy:
            copy.write(relations.getvalue())
        cursor.execute("SELECT setval(pg_get_serial_sequence('facts_relation', 'id'), %s)", [next_id])
        with cursor.copy("COPY facts_relation_source_facts (relation_id, fact_id) FROM STDIN") as copy:
            copy.write(links.getvalue())

    def grow_messages(self, total: int) -> None:
        """`total` embedded messages for the first agent's users (one session each, total / 1,000 messages per user:
        the long histories turn-level search is for), written as the embedding task writes them: the text with its
        speaker after the previous turn, and its vector (composed like the facts')."""
        from django.db import connection

        from conversations.models import Session
        from core.services import corpus_statistics_fold

        started = time.monotonic()
        predicates = self.generator.predicates
        per_user = total // USERS_PER_AGENT
        agent_id = self.agent_ids[0]
        now = datetime.now(UTC).isoformat()
        with connection.cursor() as cursor:
            cursor.execute("SELECT coalesce(max(id), 0) FROM conversations_session")
            next_session = cursor.fetchone()[0] + 1
            cursor.execute("SELECT coalesce(max(id), 0) FROM conversations_message")
            next_message = cursor.fetchone()[0] + 1
        connection.ensure_connection()
        register_vector(connection.connection)
        for u in range(USERS_PER_AGENT):
            user_id, session_id = self.user_ids[0][u], next_session + u
            subjects = np.asarray(self.user_subjects[u])[self.rng.integers(len(self.user_subjects[u]), size=per_user)]
            pairs = np.stack([subjects, self.rng.integers(len(predicates), size=per_user)], axis=1)
            vectors = self._compose(pairs)
            texts = [f"{self.subjects[s]} {predicates[p]}" for s, p in pairs]
            with connection.cursor() as cursor:
                Session.objects.create(
                    id=session_id, agent_id=agent_id, user_id=user_id, external_id=f"history-{u}",
                    message_count=per_user,
                )  # fmt: skip
                with cursor.copy(
                    "COPY conversations_message (id, session_id, role, content, token_count, created_at, stored_at, "
                    "metadata) FROM STDIN"
                ) as copy:
                    for i, text in enumerate(texts):
                        role = "user" if i % 2 == 0 else "assistant"
                        copy.write_row((next_message + i, session_id, role, text, 0, now, now, "{}"))
                with cursor.copy(
                    "COPY conversations_messageembedding (message_id, space_id, agent_id, user_id, session_id, "
                    "embedding, search_text) FROM STDIN WITH (FORMAT BINARY)"
                ) as copy:
                    copy.set_types(["int8", "int8", "int8", "int8", "int8", "vector", "text"])
                    for i, text in enumerate(texts):
                        speaker = "user" if i % 2 == 0 else "assistant"
                        previous = f"{'assistant' if i % 2 == 0 else 'user'}: {texts[i - 1]}\n" if i else ""
                        copy.write_row(
                            (next_message + i, self.space.pk, agent_id, user_id, session_id, vectors[i],
                             f"{previous}{speaker}: {text}")
                        )  # fmt: skip
            next_message += per_user
            if u % 100 == 99:
                print(f"  messages: {(u + 1) * per_user} ({time.monotonic() - started:.0f}s)", flush=True)
        with connection.cursor() as cursor:
            for table in ("conversations_session", "conversations_message", "conversations_messageembedding"):
                cursor.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
                cursor.execute(f"VACUUM ANALYZE {table}")
        corpus_statistics_fold()
        self.messages_load_seconds = time.monotonic() - started

    def message_queries(self, n: int) -> list[tuple[int, str, str]]:
        """(agent index, user external id, question) of the first agent's users about their own subjects."""
        out = []
        for _ in range(n):
            u = int(self.rng.integers(USERS_PER_AGENT))
            subject = self.subjects[self.user_subjects[u][int(self.rng.integers(len(self.user_subjects[u])))]]
            out.append((0, f"user-{u}", self.generator.question(subject)))
        return out

    def queries(self, n: int, *, per_user: bool) -> list[tuple[int, str | None, str]]:
        """(agent index, user external id or None, question) about random users' subjects."""
        out = []
        for _ in range(n):
            a = int(self.rng.integers(AGENTS))
            u = int(self.rng.integers(USERS_PER_AGENT))
            subject = self.subjects[self.user_subjects[u][int(self.rng.integers(len(self.user_subjects[u])))]]
            out.append((a, f"user-{u}" if per_user else None, self.generator.question(subject)))
        return out


FACT_COLUMNS = [
    "id",
    "agent_id",
    "user_id",
    "scopes",
    "content",
    "content_hash",
    "lineage",
    "version",
    "formed_at",
    "valid_from",
    "change_reason",
]


NULL = "\\N"  # COPY's text format


def _copy_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\t", " ").replace("\n", " ")


def _fact_defaults() -> tuple[list[str], str]:
    """The other columns of facts_fact with the model's defaults, in COPY text format (tab-separated)."""
    from django.db.models import GeneratedField

    from facts.models import Fact

    columns, values = [], []
    for field in Fact._meta.concrete_fields:
        if field.column in FACT_COLUMNS or isinstance(field, GeneratedField):
            continue
        default = field.get_default()
        if default is None:
            text = "\\N"
        elif isinstance(default, bool):
            text = "t" if default else "f"
        elif isinstance(default, list | tuple):
            text = "{" + ",".join(str(item) for item in default) + "}"
        elif isinstance(default, dict):
            text = json.dumps(default)
        else:
            text = str(default)
        columns.append(field.column)
        values.append(text)
    return columns, "\t".join(values)


STAGES = (
    "embed",
    "time_query",
    "text_sql",
    "embed_wait",
    "vector_sql",
    "time_sql",
    "details_sql",
    "neighbour_sql",
    "graph_sql",
    "screen",
    "fuse",
    "hits_sql",
    "serialize",
    "app",
)


def timed_searches(
    store: Store, base_url: str, queries, *, concurrency: int, messages: bool = False, web: str = "web"
) -> dict:
    """Latency percentiles and throughput, and the median of each stage the server reported (Server-Timing); `http`
    is what the client measured beyond the server's own time: connection, request, response, the client. `web` is
    the name of the web server behind `base_url` (its CPU is counted)."""
    clients = [MemoryClient(base_url, key, timeout=300) for key in store.keys]

    def one(query) -> tuple[float, dict[str, float]]:
        a, user, text = query
        started = time.perf_counter()
        if messages:
            clients[a].messages_search(query=text, user=user, top_k=10)
        else:
            clients[a].search(query=text, user=user, top_k=10)
        elapsed = time.perf_counter() - started
        return elapsed, clients[a].server_timing

    cpu_before = store.stack.cpu_seconds(web=web)
    started = time.perf_counter()
    if concurrency == 1:
        results = [one(q) for q in queries]
    else:
        with ThreadPoolExecutor(concurrency) as pool:
            results = list(pool.map(one, queries))
    elapsed = time.perf_counter() - started
    cpu_after = store.stack.cpu_seconds(web=web)
    seconds = [result[0] for result in results]
    stages = {stage: round(statistics.median(timing.get(stage, 0.0) for _, timing in results), 2) for stage in STAGES}
    stages["http"] = round(statistics.median(1000 * total - timing.get("app", 0.0) for total, timing in results), 2)
    return {
        "p50_ms": 1000 * percentile(seconds, 50),
        "p95_ms": 1000 * percentile(seconds, 95),
        "p99_ms": 1000 * percentile(seconds, 99),
        "searches_per_s": len(queries) / elapsed,
        "n": len(queries),
        "stages_p50_ms": stages,
        # CPU time per search of each part of the one machine: what bounds throughput when the cores are busy.
        "cpu_ms_per_search": {
            part: round(1000 * (cpu_after[part] - cpu_before[part]) / len(queries), 2) for part in cpu_before
        },
    }


def median_of_runs(runs: list[dict]) -> dict:
    """Each figure's median over the runs; each stage's too."""
    nested = ("stages_p50_ms", "cpu_ms_per_search")
    cell = {stat: round(statistics.median(run[stat] for run in runs), 2) for stat in runs[0] if stat not in nested}
    for stat in nested:
        cell[stat] = {part: round(statistics.median(run[stat][part] for run in runs), 2) for part in runs[0][stat]}
    return cell | {"runs": len(runs)}


def mixed_load(store: Store, base_url: str, *, queries: int, ingest_clients: int = 2) -> dict:
    """Per-user searches at concurrency 1 while `ingest_clients` clients post 20-message sessions and ask for each
    one's formation (the stack's worker, offline LLM): what production sees. Reports the search latencies and what
    the writers got done meanwhile."""
    from formation.models import FormationJob

    stop = threading.Event()
    appended: list[int] = []
    predicates = store.generator.predicates

    def ingest(k: int) -> None:
        client = MemoryClient(base_url, store.keys[k % AGENTS], timeout=300)
        i = 0
        while not stop.is_set():
            subject = store.subjects[int(store.rng.integers(len(store.subjects)))]
            messages = [
                {
                    "role": "user" if j % 2 == 0 else "assistant",
                    "content": f"{subject} {predicates[int(store.rng.integers(len(predicates)))]}",
                }
                for j in range(20)
            ]
            session = f"mixed-{k}-{i}-{uuid.uuid4().hex[:6]}"
            client.messages_append(session, messages, user=f"user-{i % USERS_PER_AGENT}")
            client.session_form(session)
            appended.append(len(messages))
            i += 1

    formed_before = FormationJob.objects.filter(status="succeeded").count()
    writers = [threading.Thread(target=ingest, args=(k,)) for k in range(ingest_clients)]
    started = time.monotonic()
    for writer in writers:
        writer.start()
    time.sleep(2)  # the writers are going
    result = timed_searches(store, base_url, store.queries(queries, per_user=True), concurrency=1)
    stop.set()
    for writer in writers:
        writer.join(60)
    elapsed = time.monotonic() - started
    result["ingested_messages_per_s"] = round(sum(appended) / elapsed, 1)
    result["formations_succeeded"] = FormationJob.objects.filter(status="succeeded").count() - formed_before
    result["seconds"] = round(elapsed, 1)
    return result


def flame_graph_record(store: Store, base_url: str, *, web_pid: int, queries: int, output: Path) -> dict:
    """Where the web processes' CPU goes during per-user searches, one at a time: py-spy samples every thread of
    gunicorn's master and workers (idle threads left out) without pausing them, and writes an SVG flame graph."""
    output.parent.mkdir(parents=True, exist_ok=True)
    recorder = subprocess.Popen(
        [str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(web_pid), "--subprocesses",
         "--nonblocking", "--rate", "200", "--format", "flamegraph", "--output", str(output)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    time.sleep(2)  # attached to every process before the first search
    measured = timed_searches(store, base_url, store.queries(queries, per_user=True), concurrency=1)
    recorder.send_signal(signal.SIGINT)
    _, errors = recorder.communicate(timeout=120)
    if recorder.returncode != 0 or not output.exists():
        raise RuntimeError(f"py-spy wrote no flame graph: {errors.strip()}")
    return {"svg": str(output), "searches": queries, "p50_ms_while_sampled": measured["p50_ms"]}


def variants_parse(specs: list[str]) -> list[dict]:
    """`name=dir[:NAME=value,...]` -> the web servers to compare: the code of a checkout with settings of its own."""
    variants = []
    for spec in specs:
        name, rest = spec.split("=", 1)
        code_dir, _, settings = rest.partition(":")
        code_dir = Path(code_dir).resolve()
        revision = subprocess.run(
            ["git", "-C", str(code_dir), "describe", "--always", "--dirty"], capture_output=True, text=True, check=True
        ).stdout.strip()
        settings_env = dict(pair.split("=", 1) for pair in settings.split(",") if pair)
        variants.append({"name": name, "code_dir": code_dir, "revision": revision, "settings_env": settings_env})
    return variants


def variants_compare(store: Store, variants: list[dict], *, queries: int, rounds: int, messages: bool = False) -> dict:
    """Per-user and agent-wide searches at concurrency 1 through each variant's web server (all started beforehand,
    idle but for the one measured), `rounds` times, the variants' order rotated each round and every variant asked
    the same questions in a round: each figure is the median over the rounds. With `messages`, per-user turn search
    too (messages_c1)."""
    order = list(range(len(variants)))
    cells = ["per_user_c1", "agent_wide_c1", *(["messages_c1"] if messages else [])]
    runs: dict[str, dict[str, list[dict]]] = {v["name"]: {cell: [] for cell in cells} for v in variants}
    loads = []
    for round_index in range(rounds):
        questions = {
            "per_user_c1": store.queries(queries, per_user=True),
            "agent_wide_c1": store.queries(queries, per_user=False),
        }
        if messages:
            questions["messages_c1"] = store.message_queries(queries)
        for i in order[round_index % len(order) :] + order[: round_index % len(order)]:
            variant = variants[i]
            loads.append(os.getloadavg()[0])
            for cell, asked in questions.items():
                runs[variant["name"]][cell].append(
                    timed_searches(
                        store,
                        variant["base_url"],
                        asked,
                        concurrency=1,
                        messages=cell == "messages_c1",
                        web=f"web-{variant['name']}",
                    )
                )
            print(f"  round {round_index + 1}, {variant['name']}: per-user p50 "
                  f"{runs[variant['name']]['per_user_c1'][-1]['p50_ms']:.1f} ms, CPU ms "
                  f"{runs[variant['name']]['per_user_c1'][-1]['cpu_ms_per_search']} (load {loads[-1]:.1f})",
                  flush=True)  # fmt: skip
    compared = {
        variant["name"]: {
            "code_dir": str(variant["code_dir"]),
            "revision": variant["revision"],
            "settings_env": variant["settings_env"],
            **{cell: median_of_runs(cell_runs) for cell, cell_runs in runs[variant["name"]].items()},
        }
        for variant in variants
    }
    return {"rounds": rounds, "load_average_min_max": [min(loads), max(loads)], "variants": compared}


def graph_statements_timed(store: Store, *, queries: int) -> dict:
    """The graph signal's statements alone, in this process on one connection (facts_graph_ranking for per-user
    questions, each naming an entity): ms per call prepared (core.runtime.prepared_statements) and unprepared
    (prepare_threshold None: Django's cursor), alternated question by question; then how PostgreSQL planned the
    prepared statements (pg_prepared_statements: generic plans are reused, custom ones planned per run)."""
    from django.db import connection

    from facts.selectors.graph_search import facts_graph_ranking
    from facts.selectors.search_scope import FactSearchScope

    connection.ensure_connection()
    threshold = connection.connection.prepare_threshold
    timings: dict[str, list[float]] = {"prepared": [], "unprepared": []}
    rows_differ = 0
    for a, user, text in store.queries(queries, per_user=True):
        scope = FactSearchScope(
            space_id=store.space.pk,
            dimensions=store.space.dimensions,
            agent_id=store.agent_ids[a],
            user_id=store.user_ids[a][int(user.removeprefix("user-"))],
        )
        found = {}
        for mode in ("prepared", "unprepared"):
            connection.connection.prepare_threshold = threshold if mode == "prepared" else None
            started = time.perf_counter()
            found[mode] = facts_graph_ranking(scope=scope, query=text, hops=2, limit=50)
            timings[mode].append(1000 * (time.perf_counter() - started))
        rows_differ += found["prepared"] != found["unprepared"]
    connection.connection.prepare_threshold = threshold
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT left(regexp_replace(statement, '\\s+', ' ', 'g'), 60), generic_plans, custom_plans "
            "FROM pg_prepared_statements ORDER BY generic_plans + custom_plans DESC"
        )
        plans = [{"statement": row[0], "generic_plans": row[1], "custom_plans": row[2]} for row in cursor.fetchall()]
    return {
        "calls": queries,
        "p50_ms": {mode: round(statistics.median(values), 3) for mode, values in timings.items()},
        "mean_ms": {mode: round(statistics.mean(values), 3) for mode, values in timings.items()},
        "answers_differ": rows_differ,
        "prepared_statements": plans,
    }


def hnsw_recall(store: Store, *, queries: int) -> dict:
    """Agent-wide: the product's vector path for an agent's agent-wide facts (its own HNSW index where it has one:
    the half-precision expression and the index's predicate, as facts.selectors.vectors orders them) against an exact
    scan of the same rows (the uncast column, which no index matches), at several ef_search values. Agents without an
    index are scanned exactly by the product too: recall 1.0, reported as such."""
    from django.db import connection, transaction

    from facts.services.vector_indexes import fact_vector_index_expression, fact_vector_indexes

    with_index = fact_vector_indexes(space_id=store.space.pk)
    texts = store.queries(queries, per_user=False)
    vectors = store.embed([text for _, _, text in texts])
    dims = store.space.dimensions
    sql = (
        "SELECT fact_id FROM facts_factembedding WHERE space_id = %s::bigint AND agent_id = %s::bigint "
        "AND restricted_to_user_id IS NULL AND valid_to IS NULL ORDER BY {expr} LIMIT 10"
    )
    indexed = fact_vector_index_expression(column="embedding", dimensions=dims)
    paths = {"hnsw" if with_index.get(store.agent_ids[a]) else "exact" for a, _, _ in texts}
    recall = {}
    for ef in EF_SEARCH_VALUES:
        found = []
        for (a, _, _), vector in zip(texts, vectors, strict=True):
            literal = "[" + ",".join(f"{x:.6f}" for x in vector) + "]"
            args = [store.space.pk, store.agent_ids[a], literal]
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(
                    "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
                    "set_config('hnsw.ef_search', %s, true)",
                    [str(ef)],
                )
                cursor.execute(sql.format(expr=f"{indexed} <=> %s::halfvec({dims})"), args)
                approximate = {row[0] for row in cursor.fetchall()}
                cursor.execute(sql.format(expr=f"embedding <=> %s::vector({dims})"), args)
                exact = {row[0] for row in cursor.fetchall()}
            found.append(len(approximate & exact) / max(len(exact), 1))
        recall[ef] = round(float(np.mean(found)), 4)
    return {"path": "/".join(sorted(paths)), "recall_at_10_by_ef_search": recall}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", type=int, nargs="+", default=[10_000])
    parser.add_argument("--queries", type=int, default=300, help="per scope, concurrency and repeat")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--recall-queries", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--predicates", type=int, default=6000, help="distinct predicates embedded for real")
    parser.add_argument("--output", default="search_latency.json")
    parser.add_argument(
        "--mixed-queries", type=int, default=0, help="at the largest scale, searches under ingestion and formation"
    )
    parser.add_argument("--messages", type=int, default=0, help="then this many embedded messages: turn search")
    parser.add_argument("--web-workers", type=int, default=2, help="gunicorn processes (production's default: 2)")
    parser.add_argument("--web-threads", type=int, default=4, help="threads per gunicorn process (default: 4)")
    parser.add_argument(
        "--flame-graph", metavar="SVG", help="at the largest scale, py-spy records the web processes during per-user "
        "searches at concurrency 1 (--queries of them) and writes this flame graph (requirements/bench.txt)",
    )  # fmt: skip
    parser.add_argument("--graph", action="store_true", help="give every user the entity graph of their facts")
    parser.add_argument(
        "--variants", nargs="+", metavar="NAME=DIR[:SETTING=VALUE,...]", help="instead of the usual cells: compare "
        "web servers running the code of these checkouts (e.g. a `git worktree` of the commit before) with these "
        "settings, over the same store, at concurrency 1, --repeats rounds alternated; e.g. "
        "off=.:MEMORY_GRAPH_WEIGHT=0 before=../before:MEMORY_GRAPH_WEIGHT=0.25 after=.:MEMORY_GRAPH_WEIGHT=0.25",
    )  # fmt: skip
    args = parser.parse_args()
    variants = variants_parse(args.variants or [])
    info = machine()
    results = {"benchmark": "search_latency", "machine": info, "scales": {}, "settings": {}}
    with throwaway_stack() as stack:
        store = Store(stack, seed=args.seed, predicates=args.predicates, graph=args.graph)
        results["composition_fidelity"] = store.fidelity
        results["pool_embedding_seconds"] = round(store.pool_seconds, 1)
        from django.conf import settings

        results["settings"] = {
            "MEMORY_SEARCH_HNSW_EF_SEARCH": settings.MEMORY_SEARCH_HNSW_EF_SEARCH,
            "MEMORY_SEARCH_HNSW_MIN_SHARED_FACTS": settings.MEMORY_SEARCH_HNSW_MIN_SHARED_FACTS,
            "MEMORY_RRF_K": settings.MEMORY_RRF_K,
            "MEMORY_GRAPH_WEIGHT": settings.MEMORY_GRAPH_WEIGHT,
            "MEMORY_GRAPH_HOPS": settings.MEMORY_GRAPH_HOPS,
            "graph": args.graph,
            "shared_fraction": SHARED_FRACTION,
            "agents": AGENTS,
            "users_per_agent": USERS_PER_AGENT,
        }
        if variants:
            results["variants"] = {}
            for variant in variants:
                variant["base_url"] = stack.start_web(
                    workers=args.web_workers,
                    threads=args.web_threads,
                    name=f"web-{variant['name']}",
                    settings_env=variant["settings_env"],
                    code_dir=variant["code_dir"],
                )
            for scale in sorted(args.scales):
                store.grow(scale)
                if args.messages and scale == min(args.scales):
                    store.grow_messages(args.messages)
                for variant in variants:  # warm-up: the model loaded in every worker, caches filled
                    warm = store.queries(60, per_user=True) + store.queries(20, per_user=False)
                    timed_searches(store, variant["base_url"], warm, concurrency=2, web=f"web-{variant['name']}")
                    if args.messages:
                        warm_turns = store.message_queries(20)
                        timed_searches(
                            store,
                            variant["base_url"],
                            warm_turns,
                            concurrency=2,
                            messages=True,
                            web=f"web-{variant['name']}",
                        )
                print(f"\n{scale:,} facts: variants compared", flush=True)
                results["variants"][str(scale)] = {
                    "load_seconds": round(store.load_seconds, 1),
                    **variants_compare(
                        store, variants, queries=args.queries, rounds=args.repeats, messages=bool(args.messages)
                    ),
                }
                if args.graph:
                    results["variants"][str(scale)]["graph_statements"] = graph_statements_timed(
                        store, queries=args.queries
                    )
                    print(f"  graph statements in-process: {results['variants'][str(scale)]['graph_statements']}")
                RESULTS_DIR.mkdir(parents=True, exist_ok=True)
                (RESULTS_DIR / args.output).write_text(json.dumps(results, indent=1, default=str))
                variants_print(results["variants"][str(scale)])
            return 0
        base_url = stack.start_web(workers=args.web_workers, threads=args.web_threads)
        stack.start_deployment_workers()  # the mixed load forms memory as production would
        for scale in sorted(args.scales):
            store.grow(scale)
            # Warm-up: the web workers load the model on first use; caches fill.
            timed_searches(store, base_url, store.queries(40, per_user=True), concurrency=2)
            row: dict = {
                "load_seconds": round(store.load_seconds, 1),
                "index_build_seconds": round(store.index_seconds, 1),
                "agent_indexes_built": len(store.indexes_built),
            }
            for scope, per_user in (("per_user", True), ("agent_wide", False)):
                for concurrency in (1, 8):
                    runs = [
                        timed_searches(
                            store, base_url, store.queries(args.queries, per_user=per_user), concurrency=concurrency
                        )
                        for _ in range(args.repeats)
                    ]
                    row[f"{scope}_c{concurrency}"] = median_of_runs(runs)
            row["agent_wide_vector_recall"] = hnsw_recall(store, queries=args.recall_queries)
            row["rss_mb"] = {
                "web": round(stack.rss_mb("web"), 1),
                "web_processes": [round(size, 1) for size in stack.rss_mb_each("web")],
                "worker": round(stack.rss_mb("worker"), 1),
                "formation_worker": round(stack.rss_mb("formation-worker"), 1),
            }
            if args.flame_graph and scale == max(args.scales):
                row["flame_graph"] = flame_graph_record(
                    store, base_url, web_pid=stack.pids("web")[0], queries=args.queries, output=Path(args.flame_graph)
                )
            if args.mixed_queries and scale == max(args.scales):
                row["per_user_c1_mixed_load"] = mixed_load(store, base_url, queries=args.mixed_queries)
            results["scales"][str(scale)] = row
            print_row(scale, row)
            # Written after every scale: a long run that is stopped keeps what it measured.
            RESULTS_DIR.mkdir(parents=True, exist_ok=True)
            (RESULTS_DIR / args.output).write_text(json.dumps(results, indent=1))
        if args.messages:
            store.grow_messages(args.messages)
            timed_searches(store, base_url, store.message_queries(40), concurrency=2, messages=True)
            cells = {}
            for concurrency in (1, 8):
                runs = [
                    timed_searches(
                        store, base_url, store.message_queries(args.queries), concurrency=concurrency, messages=True
                    )
                    for _ in range(args.repeats)
                ]
                cells[f"per_user_c{concurrency}"] = median_of_runs(runs)
            results["messages"] = {
                "messages": args.messages,
                "per_user": args.messages // USERS_PER_AGENT,
                "load_seconds": round(store.messages_load_seconds, 1),
                **cells,
            }
            print(f"\n{args.messages:,} embedded messages ({args.messages // USERS_PER_AGENT} per user): {cells}")
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / args.output).write_text(json.dumps(results, indent=1))
    print(f"\nwrote {RESULTS_DIR / args.output}")
    return 0


def variants_print(compared: dict) -> None:
    print(f"  {'variant':10} {'cell':14} {'p50 ms':>7} {'p95 ms':>7}  graph_sql p50  CPU ms web / postgres")
    for name, cells in compared["variants"].items():
        for cell in ("per_user_c1", "agent_wide_c1", "messages_c1"):
            if cell not in cells:
                continue
            figures = cells[cell]
            cpu = figures["cpu_ms_per_search"]
            print(
                f"  {name:10} {cell:14} {figures['p50_ms']:7.1f} {figures['p95_ms']:7.1f}  "
                f"{figures['stages_p50_ms'].get('graph_sql', 0):13.2f}  {cpu['web']:.2f} / {cpu['postgres']:.2f}"
            )
    print(f"  load average during: {compared['load_average_min_max']}")


def print_row(scale: int, row: dict) -> None:
    print(
        f"\n{scale:,} facts (load {row['load_seconds']}s, {row['agent_indexes_built']} per-agent HNSW indexes built in "
        f"{row['index_build_seconds']}s)"
    )
    print(f"  {'scope':12} {'conc':>4} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'search/s':>9}")
    for scope in ("per_user", "agent_wide"):
        for concurrency in (1, 8):
            cell = row[f"{scope}_c{concurrency}"]
            print(
                f"  {scope:12} {concurrency:>4} {cell['p50_ms']:8.1f} {cell['p95_ms']:8.1f} {cell['p99_ms']:8.1f} "
                f"{cell['searches_per_s']:9.1f}   stages p50 ms: {cell['stages_p50_ms']}"
            )
            print(f"  {'':12} {'':>4} CPU ms per search: {cell['cpu_ms_per_search']}")
    if "per_user_c1_mixed_load" in row:
        print(f"  per-user, concurrency 1, under ingestion and formation: {row['per_user_c1_mixed_load']}")
    print(f"  agent-wide vector path recall@10 vs exact: {row['agent_wide_vector_recall']}")
    print(f"  RSS MB: {row['rss_mb']}")


if __name__ == "__main__":
    random.seed(0)
    sys.exit(main())
