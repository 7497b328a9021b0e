"""Schemathesis against the OpenAPI schema, in-process through the WSGI app: generated requests, valid and invalid,
for every operation get no 5xx the schema does not document (the chat proxy's 503 without an LLM is documented) and
no response that breaks the schema. Bounded and derandomised: the same examples on every run, a few seconds per
operation. Boundary values (maximum lengths, huge numbers) are test_hostile_input's job, with exact expectations."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, Phase
from hypothesis import settings as hypothesis_settings
from schemathesis.specs.openapi.checks import response_schema_conformance

from conversations.models import Agent
from conversations.services.api_keys import api_key_create
from conversations.services.ingestion import MessageInput, session_append_messages

EXAMPLES_PER_OPERATION = 6

schema = schemathesis.openapi.from_dict(
    json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True), default=str))
)
schema.app = get_wsgi_application()


def no_undocumented_server_error(ctx, response, case) -> None:
    documented = set(case.operation.definition.raw.get("responses", {}))
    if response.status_code >= 500 and str(response.status_code) not in documented:
        raise AssertionError(
            f"{response.status_code} from {case.method} {case.formatted_path}: {response.content[:500]!r}"
        )


@pytest.fixture
def wsgi_in_test_transaction() -> Iterator[None]:
    """The WSGI handler closes the database connection around each request, which would end the test's transaction;
    Django's test client disconnects the same signal handler for the same reason."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def api_headers(db, settings, wsgi_in_test_transaction) -> dict[str, str]:
    """A key of an agent whose user "u" has a session "s" (generated ids sometimes hit them)."""
    settings.LLM_PROVIDER = "offline"
    settings.API_THROTTLE_RATE = ""  # hundreds of requests in a few seconds on one key
    agent = Agent.objects.create(external_id="fuzzed-agent")
    session_append_messages(
        agent=agent,
        user_external_id="u",
        session_external_id="s",
        messages=[MessageInput(role="user", content="I keep bees on my roof.")],
    )
    _, key = api_key_create(agent=agent)
    return {"Authorization": f"Bearer {key}"}


@schema.parametrize()
@hypothesis_settings(
    max_examples=EXAMPLES_PER_OPERATION,
    derandomize=True,
    deadline=None,
    phases=[Phase.generate],  # schemathesis' boundary-value phase alone costs minutes; test_hostile_input covers it
    suppress_health_check=list(HealthCheck),
    database=None,
)
def test_no_server_error_and_no_response_breaking_the_schema(case, api_headers):
    case.call_and_validate(headers=api_headers, checks=[no_undocumented_server_error, response_schema_conformance])
