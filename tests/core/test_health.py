import time

import pytest

from core.runtime.worker_heartbeat import HEARTBEAT_KEY, _redis_client


@pytest.mark.django_db(transaction=True)
def test_health_is_200_with_every_component_up(client, celery_worker_process):
    response = client.get("/health/")

    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "up" and body["down"] == [] and body["degraded"] == []
    assert set(body["components"]) == {
        "database",
        "pgvector",
        "redis",
        "worker",
        "embeddings",
        "formation",
        "memory_review",
    }
    assert set(body["components"]["worker"]["queues"]) == {"celery", "formation"}
    assert body["components"]["pgvector"]["version"].startswith("0.8")
    assert body["components"]["embeddings"]["space"] == "local:all-MiniLM-L6-v2:384"


@pytest.mark.django_db
def test_health_is_503_naming_the_worker_when_no_heartbeat_is_recent(client, settings):
    _redis_client().set(f"{HEARTBEAT_KEY}:celery", f"{time.time():.3f} live-worker@host")
    _redis_client().set(f"{HEARTBEAT_KEY}:formation", "1000.0 stale-worker@host")

    response = client.get("/health/")

    assert response.status_code == 503
    body = response.json()
    assert body["down"] == ["worker"]
    queues = body["components"]["worker"]["queues"]
    assert queues["celery"]["status"] == "up"
    assert queues["formation"]["status"] == "down" and queues["formation"]["worker"] == "stale-worker@host"
    assert body["components"]["worker"]["detail"] == "no live worker for queue formation"


@pytest.mark.django_db
def test_health_names_redis_when_it_is_unreachable(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"

    response = client.get("/health/")

    assert response.status_code == 503
    assert {"redis", "worker"} <= set(response.json()["down"])
    assert "database" not in response.json()["down"]
