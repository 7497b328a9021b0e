"""Tests: real PostgreSQL + pgvector and Redis (started by `make test`); only the LLM is replaced, per test."""

from .base import *  # noqa: F403
from .base import CACHES, DATABASES, env

# The alias of a read replica, mirroring the test database: search reads use it only when DATABASE_REPLICA_URL is
# set, which tests/core/test_search_replica.py does after pointing it at a real streaming standby.
DATABASES["replica"] = {**DATABASES["default"], "TEST": {"MIRROR": "default"}}

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CACHES["default"]["KEY_PREFIX"] = "memory-test"
LLM_PROVIDER = "offline"
# The webhook tests' receiver listens on 127.0.0.1 over http; the tests of refused addresses switch this off.
WEBHOOK_ALLOW_PRIVATE_ADDRESSES = env.bool("WEBHOOK_ALLOW_PRIVATE_ADDRESSES", default=True)
WEBHOOK_REQUIRE_HTTPS = env.bool("WEBHOOK_REQUIRE_HTTPS", default=False)
# Retries within seconds, a short deadline and lease: the tests of a receiver that is down, or of a killed worker.
WEBHOOK_RETRY_SCHEDULE_SECONDS = env.list(
    "WEBHOOK_RETRY_SCHEDULE_SECONDS", cast=float, default=[0.5, 1, 1, 1, 1, 1, 1, 1, 1, 1]
)
WEBHOOK_TIMEOUT_SECONDS = env.float("WEBHOOK_TIMEOUT_SECONDS", default=3.0)
WEBHOOK_DELIVERY_LEASE_SECONDS = env.int("WEBHOOK_DELIVERY_LEASE_SECONDS", default=4)
