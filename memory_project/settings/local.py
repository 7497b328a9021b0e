"""Development: `make run` on one machine with the embedded PostgreSQL and Redis."""

from .base import *  # noqa: F403
from .base import env

DEBUG = env.bool("DJANGO_DEBUG", default=True)
# `make run` on one machine: a Prometheus on the same machine may scrape without a token.
METRICS_ALLOWED_NETWORKS = env.list("METRICS_ALLOWED_NETWORKS", default=["127.0.0.0/8", "::1/128"])
# `make run` on one machine: a webhook receiver on this machine or network may be called, over http.
WEBHOOK_ALLOW_PRIVATE_ADDRESSES = env.bool("WEBHOOK_ALLOW_PRIVATE_ADDRESSES", default=True)
WEBHOOK_REQUIRE_HTTPS = env.bool("WEBHOOK_REQUIRE_HTTPS", default=False)
