"""Development: `make run` on one machine with the embedded PostgreSQL and Redis."""

from .base import *  # noqa: F403
from .base import env

DEBUG = env.bool("DJANGO_DEBUG", default=True)
# `make run` on one machine: a Prometheus on the same machine may scrape without a token.
METRICS_ALLOWED_NETWORKS = env.list("METRICS_ALLOWED_NETWORKS", default=["127.0.0.0/8", "::1/128"])
