"""Fixtures of the facts tests."""

from __future__ import annotations

import pytest

from facts.models import Fact
from tests.facts.search_support import chain_create


@pytest.fixture
def chain(agent, end_user) -> dict[str, Fact]:
    """Maria -> Tom -> Acme -> Zurich (tests.facts.search_support.chain_create): "friend", "job" and "city"."""
    return chain_create(agent=agent, user=end_user)
