"""A real Prometheus scrapes the service as production runs it: gunicorn with two worker processes and a prefork
Celery worker with two children, each writing its samples in prometheus-client's multiprocess mode, the web's /metrics
and the worker's own exporter both behind the bearer token. The test ingests, lets formation run (the LLM is the local
OpenAI-compatible stub) and searches, and reads the results back through Prometheus's HTTP API: every family is
there, moves with the traffic, and counts every process's requests exactly."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agents.services.api_keys import api_key_create
from devstack.processes import free_port, wait_for_port
from tests.conftest import REPO_DIR, database_url_of_test_database
from tests.factories import AgentFactory
from tests.formation_support import celery_workers_paused
from tests.llm_stub_server import StubLLMServer
from tests.observability.monitoring_support import ALERTS, alert_rules, dashboard_expressions
from tests.observability.prometheus_support import prometheus_binary, prometheus_running, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

TOKEN = "scrape-token-for-the-test"
MESSAGES_ROUTE = "api/v1/sessions/<str:session_id>/messages"
SEARCH_ROUTE = "api/v1/memory/search"
MCP_ROUTE = "mcp"
SPEED_ALERTS = {"MemorySearchLatencyHigh"}


@pytest.fixture
def stub() -> Iterator[StubLLMServer]:
    server = StubLLMServer()
    with server.running():
        yield server


@pytest.fixture
def stack(tmp_path: Path, stub: StubLLMServer, celery_worker_launcher) -> Iterator[dict]:
    """gunicorn (2 worker processes, as docker-compose.yml runs the web, with gunicorn.conf.py) and a prefork worker
    (2 children), each with its own multiprocess folder."""
    prometheus_binary()  # skipped before anything starts when Debian's package is missing
    common = {
        "DATABASE_URL": database_url_of_test_database(),
        "DJANGO_SETTINGS_MODULE": "tests.settings_llm_from_env",
        "LLM_PROVIDER": "openai",
        "LLM_BASE_URL": stub.base_url,
        "LLM_API_KEY": "stub-key",
        "METRICS_BEARER_TOKEN": TOKEN,
    }
    web_port, worker_port = free_port(), free_port()
    web_folder, worker_folder = tmp_path / "metrics-web", tmp_path / "metrics-worker"
    worker_folder.mkdir()
    web = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "memory_project.wsgi:application", "--bind", f"127.0.0.1:{web_port}",
         "--workers", "2", "--log-level", "warning"],
        env=os.environ | common | {"PROMETHEUS_MULTIPROC_DIR": str(web_folder)},
        cwd=REPO_DIR,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        with celery_workers_paused():
            worker = celery_worker_launcher(
                extra_env=common
                | {
                    "PROMETHEUS_MULTIPROC_DIR": str(worker_folder),
                    "WORKER_METRICS_PORT": str(worker_port),
                    "WORKER_METRICS_ADDRESS": "127.0.0.1",
                },
                pool=("--pool", "prefork", "--concurrency", "2"),
            )
            wait_for_port(web_port, timeout=90)
            wait_for_port(worker_port, timeout=30)
            yield {
                "web": f"127.0.0.1:{web_port}",
                "worker": f"127.0.0.1:{worker_port}",
                "web_folder": web_folder,
                "worker_process": worker,
                "folder": tmp_path,
            }
    finally:
        web.terminate()
        web.wait(30)


def _post(url: str, key: str, body: dict) -> int:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.status


def _mcp_search(url: str, key: str, body: dict) -> int:
    """The same search as an MCP tool call over /mcp (stateless JSON-RPC, as the SDK's client sends it)."""
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_memory", "arguments": body}}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    request = urllib.request.Request(
        url,
        data=json.dumps(call).encode(),
        headers=headers | {"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        assert not json.loads(response.read())["result"].get("isError")
        return response.status


def _traffic(*, base: str, key: str, round_name: str, sessions: int) -> tuple[int, int, set[str]]:
    """Each session gets two appends of two messages (four: the agent's interval, so formation runs), a search and
    the same search through MCP, sent four at a time so that both web processes answer. Returns (appends, searches,
    ids and texts used)."""
    used: set[str] = set()
    jobs = []
    for index in range(sessions):
        user, session = f"user-{round_name}-{index}", f"session-{round_name}-{index}"
        lines = [f"I keep a {round_name} parrot named Kiwi{index}", f"Kiwi{index} eats {round_name} seeds daily"]
        used |= {user, session, *lines}
        for line in lines:
            messages = [{"role": "user", "content": line}, {"role": "assistant", "content": "Lovely."}]
            jobs.append((f"{base}/api/v1/sessions/{session}/messages", {"user": user, "messages": messages}))
        jobs.append(
            (f"{base}/api/v1/memory/search", {"query": f"What is the {round_name} parrot called?", "user": user})
        )
        mcp_search = {"query": f"What is the {round_name} parrot called?", "user": user}
        jobs.append((f"{base}/mcp", mcp_search))
    with ThreadPoolExecutor(4) as pool:
        statuses = list(
            pool.map(lambda job: (_mcp_search if job[0].endswith("/mcp") else _post)(job[0], key, job[1]), jobs)
        )
    assert set(statuses) <= {200, 201}, statuses
    return 2 * sessions, sessions, used


def test_prometheus_scrapes_every_process_and_sees_the_service_move(stack, stub, tmp_path):
    agent = AgentFactory(
        external_id="aviary", name="Aviary", formation_msg_interval=4, llm_daily_token_budget=10_000_000
    )
    _, key = api_key_create(agent=agent, name="scrape test")
    base = f"http://{stack['web']}"

    jobs = {"memory-web": stack["web"], "memory-worker": stack["worker"]}
    with prometheus_running(tmp_path / "prometheus", jobs=jobs, bearer_token=TOKEN, rule_files=[ALERTS]) as prometheus:
        wait_for(lambda: set(prometheus.targets_up().values()) == {"up"}, timeout=30, what="both targets up")

        appends, searches, used = _traffic(base=base, key=key, round_name="first", sessions=4)
        appended = f'sum(memory_http_requests_total{{route="{MESSAGES_ROUTE}",method="POST",status="201"}})'
        searched = f'sum(memory_http_requests_total{{route="{SEARCH_ROUTE}",method="POST",status="200"}})'
        # Exact counts: requests answered by either web process are all counted, once (each as soon as Prometheus
        # has scraped after the last of them: the requests end in any order).
        mcp_searched = 'sum(memory_mcp_tool_calls_total{tool="search_memory",outcome="ok"})'
        mcp_answered = f'sum(memory_http_requests_total{{route="{MCP_ROUTE}",status="200"}})'
        for query, expected in (
            (appended, appends),
            (searched, searches),
            (mcp_searched, searches),
            (mcp_answered, searches),
        ):
            wait_for(
                lambda query=query, expected=expected: prometheus.value(query) == expected,
                timeout=30,
                what=f"{expected} of {query} in Prometheus",
            )
        writers = {path.stem.rsplit("_", 1)[-1] for path in stack["web_folder"].glob("counter_*.db")}
        assert len(writers) >= 2, f"one web process answered everything: {writers}"

        first = {
            "stages": 'sum(memory_search_stage_duration_seconds_count{stage="vector_sql"})',
            "ingested": 'sum(memory_ingested_messages_total{role="user"})',
            "formed": 'sum(memory_formation_jobs_total{outcome="succeeded"})',
            "llm calls": 'sum(memory_llm_calls_total{provider="openai",purpose="extract_facts",outcome="ok"})',
            "llm tokens": 'sum(memory_llm_tokens_total{provider="openai"})',
            "tasks": 'sum(memory_celery_tasks_total{task="formation.form_session_memories",outcome="succeeded"})',
            "embedded": 'sum(memory_embedded_texts_total{job="memory-worker"})',
        }
        values = {
            name: wait_for(lambda q=query: prometheus.value(q), timeout=90, what=name) for name, query in first.items()
        }
        assert values["ingested"] == appends  # one user message per append
        # Each of the four sessions is formed (once its four messages are in), with an extraction call each.
        for name in ("formed", "llm calls", "tasks"):
            values[name] = wait_for(
                lambda q=first[name]: (prometheus.value(q) or 0) >= 4 and prometheus.value(q), timeout=90, what=name
            )
        for gauge in (
            "memory_formation_lag_seconds",
            "memory_formation_backlog_sessions",
            'memory_llm_circuit_breaker_state{state="closed"}',
            "memory_review_queue_pending",
            "memory_embedding_backlog",
            "memory_llm_spent_today_tokens",
        ):
            assert prometheus.query(gauge), gauge
        assert prometheus.value('memory_llm_circuit_breaker_state{state="closed"}') == 1

        # A second round: everything moves.
        _traffic(base=base, key=key, round_name="second", sessions=2)
        for name, query in first.items():
            wait_for(lambda q=query, v=values[name]: (prometheus.value(q) or 0) > v, timeout=90, what=f"{name} to grow")

        # Nothing Prometheus stored names a user or session or holds a message's words.
        series = prometheus.series('{__name__=~"memory_.+"}')
        label_values = {value for labels in series for value in labels.values()}
        assert not {value for value in label_values for secret in used if secret in value}
        assert not any(word in value for value in label_values for word in ("user-", "session-", "Kiwi", "parrot"))

        # The dashboard's and the alerts' queries run on this data, and name only families the service exports.
        exported = prometheus.metric_names()
        for expression in dashboard_expressions() + [rule["expr"] for rule in alert_rules()]:
            prometheus.query(expression.replace("$__rate_interval", "1m"))
            for name in re.findall(r"\b(memory_[a-z_]+)", expression):
                assert name in exported, f"{name} (in {expression}) is not exported"
        assert prometheus.value('max(memory_llm_agent_budget_used_ratio{agent="aviary"})') > 0
        rules = wait_for(lambda: [r for r in prometheus.rules() if r.get("lastEvaluation", "").startswith("20")],
                         timeout=30, what="the alert rules' first evaluation")  # fmt: skip
        assert {rule["name"] for rule in rules} == {rule["alert"] for rule in alert_rules()}
        assert all(rule["health"] == "ok" for rule in rules), rules
        # The latency alert measures this machine's speed over a handful of cold requests, which tests do not judge
        # (the guide: speed is for benchmarks); its expression was evaluated above. Every other rule must be quiet.
        firing = {rule["name"] for rule in rules if rule["state"] != "inactive"} - SPEED_ALERTS
        assert firing == set(), f"alerts on a healthy stack: {firing}"
