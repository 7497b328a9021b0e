"""Test settings for worker subprocesses that must talk to an LLM over HTTP (a local stub server): the LLM settings
follow the environment (LLM_PROVIDER, LLM_BASE_URL, LLM_TIMEOUT_SECONDS...), where memory_project.settings.test
pins the offline provider so that no test reaches a real model by accident."""

from memory_project.settings.base import env
from memory_project.settings.test import *  # noqa: F403

LLM_PROVIDER = env("LLM_PROVIDER", default="offline")
