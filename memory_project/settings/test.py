"""Tests: real PostgreSQL + pgvector and Redis (started by `make test`); only the LLM is replaced, per test."""

from .base import *  # noqa: F403
from .base import CACHES

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CACHES["default"]["KEY_PREFIX"] = "memory-test"
LLM_PROVIDER = "offline"
