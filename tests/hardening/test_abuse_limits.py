"""Abuse limits: per-key throttling in Redis with Retry-After, the admin login's rate limit, API keys hashed at rest,
secrets never in logs, request ids in logs and responses, and `check --deploy` clean with production settings."""

from __future__ import annotations

import io
import logging
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client

from agents.services.api_keys import api_key_create
from core.runtime.logging import SecretRedactionFilter
from tests.conftest import REPO_DIR, database_url_of_test_database
from tests.hardening.conftest import Tenants
from tests.llm_stub_server import StubLLMServer

# A window far longer than the test, so the count cannot roll over into a new window halfway through.
THREE_PER_MONTH = "3/30d"


def test_a_key_over_its_rate_gets_429_with_retry_after_and_other_keys_are_unaffected(tenants: Tenants, settings):
    settings.API_THROTTLE_RATE = THREE_PER_MONTH
    a, b = tenants.a.client(), tenants.b.client()

    statuses = [a.get("/api/v1/tools").status_code for _ in range(3)]
    throttled = a.get("/api/v1/tools")

    assert statuses == [200, 200, 200]
    assert throttled.status_code == 429
    assert 1 <= int(throttled["Retry-After"]) <= 30 * 86400
    assert throttled.json()["error"]["code"] == "throttled"
    assert set(throttled.json()["error"]) == {"code", "message", "fields"}
    assert b.get("/api/v1/tools").status_code == 200
    # Another key of the same agent has its own budget.
    _, second_key = api_key_create(agent=tenants.a.agent, name="second")
    assert Client(HTTP_AUTHORIZATION=f"Bearer {second_key}").get("/api/v1/tools").status_code == 200


def test_throttling_fails_open_while_redis_is_unreachable(tenants: Tenants, settings):
    settings.API_THROTTLE_RATE = "1/30d"
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:9/1"}
    }
    client = tenants.a.client()

    assert [client.get("/api/v1/tools").status_code for _ in range(3)] == [200, 200, 200]


@pytest.fixture
def staff_user(db):
    return get_user_model().objects.create_user("operator", password="the-right-password", is_staff=True)


def _login(username: str, password: str, *, address: str = "10.0.0.1"):
    return Client(REMOTE_ADDR=address).post("/admin/login/", {"username": username, "password": password})


def test_admin_login_is_rate_limited_per_address_and_per_username(staff_user, settings):
    settings.ADMIN_LOGIN_MAX_FAILURES = 3
    settings.ADMIN_LOGIN_WINDOW_SECONDS = 30 * 86400

    failures = [_login("operator", f"wrong-{n}").status_code for n in range(3)]  # a failure shows the form again
    blocked = _login("operator", "the-right-password")

    assert failures == [200, 200, 200]
    assert blocked.status_code == 429 and int(blocked["Retry-After"]) >= 1
    # The username is blocked from any address; the address is blocked for any username.
    assert _login("operator", "the-right-password", address="10.0.0.2").status_code == 429
    assert _login("someone-else", "whatever").status_code == 429
    # Others are not.
    assert _login("someone-else", "whatever", address="10.0.0.3").status_code == 200


def test_a_successful_admin_login_clears_the_username_count(staff_user, settings):
    settings.ADMIN_LOGIN_MAX_FAILURES = 2
    settings.ADMIN_LOGIN_WINDOW_SECONDS = 30 * 86400

    assert _login("operator", "typo", address="10.0.1.1").status_code == 200
    assert _login("operator", "the-right-password", address="10.0.1.2").status_code == 302
    assert _login("operator", "typo", address="10.0.1.3").status_code == 200
    assert _login("operator", "the-right-password", address="10.0.1.4").status_code == 302


def test_api_keys_are_stored_only_as_digests(tenants: Tenants):
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM conversations_agentapikey")
        stored = repr(cursor.fetchall())

    assert tenants.a.key not in stored and tenants.b.key not in stored
    assert tenants.a.key[12:] not in stored  # not even the part after the shown prefix


@pytest.fixture
def log_output() -> Iterator[io.StringIO]:
    """What the configured console handler writes (LOGGING in settings), at DEBUG level for the libraries that
    would see secrets: Django, the openai SDK, httpx."""
    handler = next(
        handler
        for handler in logging.getLogger().handlers
        if any(isinstance(log_filter, SecretRedactionFilter) for log_filter in handler.filters)
    )
    stream = io.StringIO()
    previous_stream = handler.setStream(stream)
    loggers = [logging.getLogger(name) for name in ("", "django", "openai", "httpx", "httpcore", "conversations")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.DEBUG)
    try:
        yield stream
    finally:
        handler.setStream(previous_stream)
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def test_secrets_never_reach_the_logs(tenants: Tenants, settings, log_output):
    llm_key = "sk-upstream-" + secrets.token_urlsafe(24)
    with StubLLMServer().running() as stub:
        settings.LLM_PROVIDER, settings.LLM_BASE_URL, settings.LLM_API_KEY = "openai", stub.base_url, llm_key
        response = tenants.a.client(HTTP_X_REQUEST_ID="req-secret-check").post(
            "/v1/chat/completions",
            {"messages": [{"role": "user", "content": "hello"}], "memory_user": "alice"},
            "application/json",
        )
    assert response.status_code == 200, response.content
    assert stub.requests[0].headers["authorization"] == f"Bearer {llm_key}"  # the key was really used
    # Whatever else might log them: a handler dumping headers, an exception carrying a URL with a password.
    logger = logging.getLogger("conversations.hardening")
    logger.warning("request headers %s", {"Authorization": f"Bearer {tenants.a.key}", "X-API-Key": tenants.b.key})
    logger.info("calling upstream with api_key=%s", llm_key)
    try:
        raise ConnectionError("could not reach postgres://memory:db-password-123@db:5432/memory")
    except ConnectionError:
        logger.exception("database down")

    output = log_output.getvalue()
    assert "[redacted]" in output
    for secret in (tenants.a.key, tenants.b.key, llm_key, "db-password-123", settings.SECRET_KEY):
        assert secret not in output
    assert "[req-secret-check]" in output  # the lines of the request carry its id


def test_every_response_carries_a_request_id(tenants: Tenants):
    client = tenants.a.client()
    given = client.get("/api/v1/tools", HTTP_X_REQUEST_ID="abc-123")
    generated = client.get("/api/v1/tools")
    unsafe = client.get("/api/v1/tools", HTTP_X_REQUEST_ID="bad id\nwith newline")

    assert given["X-Request-ID"] == "abc-123"
    assert len(generated["X-Request-ID"]) == 32
    assert unsafe["X-Request-ID"] != "bad id\nwith newline" and len(unsafe["X-Request-ID"]) == 32


def test_check_deploy_is_clean_with_production_settings(db):
    env = {key: value for key, value in os.environ.items() if not key.startswith("DJANGO_")} | {
        "DJANGO_SETTINGS_MODULE": "memory_project.settings.production",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_ALLOWED_HOSTS": "memory.example.com",
        "DATABASE_URL": database_url_of_test_database(),
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
