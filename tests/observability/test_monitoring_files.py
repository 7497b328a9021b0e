"""deploy/monitoring: the alert rules pass `promtool check rules` and their unit tests (`promtool test rules`), the
monitoring profile's Prometheus configuration is valid and scrapes what docker-compose.yml runs, every alert has its
entry in the runbook (docs/operations/runbook.md), and the Grafana dashboard is well-formed. That every dashboard and
alert query runs against real data is checked in test_prometheus_scrape.py, where a real Prometheus holds some."""

from __future__ import annotations

import json
import re
import subprocess

import yaml

from tests.conftest import REPO_DIR
from tests.observability.monitoring_support import ALERTS, DASHBOARD, MONITORING, alert_rules, dashboard_expressions
from tests.observability.prometheus_support import prometheus_binary


def _promtool(*args: str, cwd=MONITORING / "prometheus") -> subprocess.CompletedProcess:
    return subprocess.run([prometheus_binary("promtool"), *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_the_alert_rules_pass_promtool_check_and_their_unit_tests():
    checked = _promtool("check", "rules", str(ALERTS))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(alert_rules())} rules found" in checked.stdout

    tested = _promtool("test", "rules", "alerts_test.yml")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    # Every alert has a unit test that expects it to fire.
    fired = set(
        re.findall(
            r"alertname: (\w+)\n\s+exp_alerts:\n\s+- exp_labels", (ALERTS.parent / "alerts_test.yml").read_text()
        )
    )
    assert fired == {rule["alert"] for rule in alert_rules()}


def test_each_alert_names_its_runbook_entry():
    runbook = (REPO_DIR / "docs" / "operations" / "runbook.md").read_text()
    headings = set(re.findall(r"^### (\w+)$", runbook, re.M))
    for rule in alert_rules():
        assert rule["alert"] in headings, f"docs/operations/runbook.md has no entry '### {rule['alert']}'"
        assert rule["annotations"]["runbook"] == f"docs/operations/runbook.md#{rule['alert'].lower()}"
        assert rule["labels"]["severity"] in ("critical", "warning", "info")


def test_the_monitoring_profile_scrapes_what_compose_runs():
    checked = _promtool("check", "config", "--syntax-only", "prometheus.yml")
    assert checked.returncode == 0, checked.stdout + checked.stderr

    compose = yaml.safe_load((REPO_DIR / "docker-compose.yml").read_text())
    services = compose["services"]
    for name in ("prometheus", "grafana"):
        assert services[name]["profiles"] == ["monitoring"], name
        for volume in services[name]["volumes"]:
            source = volume.split(":")[0]
            assert not source.startswith("./") or (REPO_DIR / source).exists(), volume
    assert "metrics_token" in services["prometheus"]["secrets"]
    assert compose["secrets"]["metrics_token"] == {"environment": "METRICS_BEARER_TOKEN"}
    for name in ("web", "worker", "formation-worker", "beat"):
        assert services[name]["environment"]["PROMETHEUS_MULTIPROC_DIR"] == "/run/metrics", name
        assert "/run/metrics" in services[name]["tmpfs"], name
    worker_port = int(services["worker"]["environment"]["WORKER_METRICS_PORT"])
    assert int(services["formation-worker"]["environment"]["WORKER_METRICS_PORT"]) == worker_port

    config = yaml.safe_load((MONITORING / "prometheus" / "prometheus.yml").read_text())
    assert config["rule_files"] == ["alerts.yml"]
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    assert jobs["memory-web"]["static_configs"][0]["targets"] == ["web:8000"]
    for job, service in (("memory-worker", "worker"), ("memory-formation-worker", "formation-worker")):
        assert jobs[job]["dns_sd_configs"][0] == {"names": [service], "type": "A", "port": worker_port}
    for job in jobs.values():
        assert job["authorization"]["credentials_file"] == "/run/secrets/metrics_token"


def test_the_dashboard_is_a_grafana_dashboard_over_the_profile_s_prometheus():
    dashboard = json.loads(DASHBOARD.read_text())
    datasource = yaml.safe_load((MONITORING / "grafana/provisioning/datasources/prometheus.yml").read_text())
    uid = datasource["datasources"][0]["uid"]
    assert dashboard["uid"] and dashboard["title"] == "Memory service"
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            assert target["datasource"]["uid"] == uid and target["expr"].strip(), panel["title"]
    # Families of every part of the issue have a panel.
    text = " ".join(dashboard_expressions())
    for family in (
        "memory_http_requests_total", "memory_search_stage_duration_seconds_bucket", "memory_ingested_messages_total",
        "memory_formation_jobs_total", "memory_formation_lag_seconds", "memory_formation_backlog_sessions",
        "memory_llm_circuit_breaker_state", "memory_llm_calls_total", "memory_llm_tokens_total",
        "memory_llm_spent_today_tokens", "memory_embedding_backlog", "memory_review_queue_pending",
        "memory_review_queue_oldest_age_seconds", "memory_celery_tasks_total",
        "memory_celery_task_duration_seconds_bucket",
    ):  # fmt: skip
        assert family in text, family
