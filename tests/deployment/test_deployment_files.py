"""docker-compose.yml cannot run here (no Docker engine): check by reading what a reviewer would check."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from devstack.workers import worker_commands
from tests.conftest import REPO_DIR


def _compose() -> dict:
    return yaml.safe_load((REPO_DIR / "docker-compose.yml").read_text())


def test_compose_has_the_production_services_with_their_commands():
    services = _compose()["services"]

    assert {"postgres", "redis", "web", "worker", "formation-worker", "beat", "migrate"} <= set(services)
    assert services["postgres"]["image"].startswith("pgvector/pgvector:")
    assert services["redis"]["image"].startswith("redis:")
    # gunicorn (gunicorn.conf.py) serving Django and the MCP server at /mcp (docs/architecture.md).
    assert services["web"]["command"][:2] == ["gunicorn", "memory_project.wsgi:application"]
    assert services["worker"]["command"][:4] == ["celery", "-A", "memory_project", "worker"]
    assert "-Q celery" in " ".join(services["worker"]["command"])
    # The formation worker is make run's: the formation queue on a thread pool, with a bounded connection pool.
    formation = services["formation-worker"]
    assert "celery -A memory_project worker" in formation["command"][-1]
    assert "-Q formation" in formation["command"][-1] and "--pool threads" in formation["command"][-1]
    assert formation["environment"]["DATABASE_POOL_MAX_SIZE"].startswith("${FORMATION_WORKER_DB_CONNECTIONS")
    local, _ = worker_commands(env={})["formation-worker"]
    assert local[local.index("-Q") + 1] == "formation" and local[local.index("--pool") + 1] == "threads"
    # Background work weighs less than requests for the CPU, as make run's lowest priority (nice and autogroup) does.
    assert services["worker"]["cpu_shares"] == services["formation-worker"]["cpu_shares"] == 256
    assert "cpu_shares" not in services["web"] and local[1:3] == ["-m", "devstack.background"]
    assert services["beat"]["command"][:4] == ["celery", "-A", "memory_project", "beat"]
    assert services["migrate"]["command"][-2:] == ["migrate", "--noinput"]


def test_compose_services_have_healthchecks_volumes_and_settings_from_env():
    compose = _compose()
    services = compose["services"]

    for name in ("postgres", "redis", "web", "worker", "formation-worker"):
        assert services[name]["healthcheck"]["test"], name
    assert "postgres-data" in compose["volumes"]
    assert any(volume.startswith("postgres-data:") for volume in services["postgres"]["volumes"])
    for name in ("web", "worker", "formation-worker", "beat"):
        environment = services[name]["environment"]
        assert environment["DJANGO_SETTINGS_MODULE"] == "memory_project.settings.production"
        assert (
            environment["DATABASE_URL"].startswith("postgres://") and "@postgres:5432/" in environment["DATABASE_URL"]
        )
        assert environment["REDIS_URL"] == "redis://redis:6379/0"
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"


def test_every_setting_read_from_the_environment_is_documented_in_env_example():
    documented = set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", (REPO_DIR / ".env.example").read_text(), re.M))
    read = set()
    for path in (REPO_DIR / "memory_project" / "settings").glob("*.py"):
        read |= set(re.findall(r"env(?:\.\w+)?\(\s*\"([A-Z][A-Z0-9_]+)\"", path.read_text()))
    for path in (REPO_DIR / "devstack").glob("*.py"):
        read |= set(re.findall(r"os\.environ\.get\(\"([A-Z][A-Z0-9_]+)\"", path.read_text()))

    assert read - documented == set()


def test_make_run_workers_start_below_the_web_for_the_cpu_even_in_a_session_of_their_own():
    """A nice value ranks a process only inside its autogroup; make run starts each process in a session (a group) of
    its own, so the launcher lowers the group's nice too when WORKER_AUTOGROUP_NICE asks it to."""
    if not Path("/proc/self/autogroup").exists():
        pytest.skip("no autogroups on this kernel")
    done = subprocess.run(
        [sys.executable, "-m", "devstack.background", "sh", "-c", "cat /proc/self/autogroup; nice"],
        cwd=REPO_DIR,
        capture_output=True,
        text=True,
        start_new_session=True,
        check=True,
        env=os.environ | {"WORKER_AUTOGROUP_NICE": "6"},
    )
    group, nice = done.stdout.strip().splitlines()
    assert group.endswith("nice 6") and nice == "19"
