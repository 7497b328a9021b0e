"""Development: `make run` on one machine with the embedded PostgreSQL and Redis."""

from .base import *  # noqa: F403
from .base import env

DEBUG = env.bool("DJANGO_DEBUG", default=True)
