"""Tests: real PostgreSQL + pgvector and Redis (started by `make test`); only the LLM is replaced, per test."""

from .base import *  # noqa: F403
from .base import CACHES, DATABASES

# The alias of a read replica, mirroring the test database: search reads use it only when DATABASE_REPLICA_URL is
# set, which tests/core/test_search_replica.py does after pointing it at a real streaming standby.
DATABASES["replica"] = {**DATABASES["default"], "TEST": {"MIRROR": "default"}}

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CACHES["default"]["KEY_PREFIX"] = "memory-test"
LLM_PROVIDER = "offline"
