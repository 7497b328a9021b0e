"""The monitoring files (deploy/monitoring) as the tests read them: the alert rules and the Grafana dashboard's
queries, checked on their own in test_monitoring_files.py and run against real data in test_prometheus_scrape.py."""

from __future__ import annotations

import json

import yaml

from tests.conftest import REPO_DIR

MONITORING = REPO_DIR / "deploy" / "monitoring"
ALERTS = MONITORING / "prometheus" / "alerts.yml"
DASHBOARD = MONITORING / "grafana" / "dashboards" / "memory-service.json"


def alert_rules() -> list[dict]:
    return [rule for group in yaml.safe_load(ALERTS.read_text())["groups"] for rule in group["rules"]]


def dashboard_expressions() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text())
    return [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
