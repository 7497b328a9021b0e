"""A fuzzing campaign against the OpenAPI schema with schemathesis, in-process through the WSGI app, aimed at what the
second hostile probe (issue 17) broke:

- every operation, stateless, with valid and invalid inputs (schemathesis' positive and negative generation);
- stateful, link-driven scenarios: a created session, fact, reflection or document, or the first item of a list,
  feeds the path parameters of the operations on it, so they reach rows that exist;
- hostile values where the schema says little: cursors built the way DRF encodes them (base64 of a query string)
  with any position, session ids of any content, and JSON text inside a tool call's `arguments` nested thousands of
  levels deep or holding NaN, 1e999, NUL and lone surrogates.

Checks on every response: no 5xx the schema does not document (the chat proxy's 503 without an LLM is), the schema's
response shapes, the one error shape for every error, and a 400 that names its fields. Bounded and derandomised in
`make test`; `make fuzz` runs FUZZ_SCALE times more with fresh randomness and prints the tally (tests/fuzzing.py)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from urllib.parse import urlencode

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections, transaction
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, Phase
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from schemathesis.specs.openapi.checks import negative_data_rejection, response_schema_conformance

from conversations.models import Agent
from conversations.services.api_keys import api_key_create
from conversations.services.ingestion import MessageInput, session_append_messages
from facts.tools import TOOLS
from tests.fuzzing import FUZZING, SERVER_ERRORS, examples, tally_add

pytestmark = pytest.mark.fuzz

EXAMPLES_PER_OPERATION = 5
# Where the probe of issue 17 found 500s: path ids written to the database, cursors, JSON inside strings.
PROBED_OPERATIONS = [
    "api_v1_sessions_messages_create",
    "api_v1_sessions_messages_list",
    "api_v1_facts_list",
    "api_v1_reflections_list",
    "api_v1_tools_call_create",
]
EXAMPLES_PER_PROBED_OPERATION = 30
SCENARIOS = 12
STEPS_PER_SCENARIO = 6

# --- hostile values where the schema says "a string" ---------------------------------------------------------------

_cursor_values = st.one_of(st.integers(-(2**70), 2**70).map(str), st.text(max_size=10))
cursors = st.one_of(
    st.fixed_dictionaries({"p": _cursor_values}, optional={"o": _cursor_values, "r": _cursor_values}).map(
        lambda tokens: base64.b64encode(urlencode(tokens).encode()).decode()
    ),
    st.text(max_size=30),
)
# Any text, longer than the column too (the schema's maxLength is lifted for it), and now and then the fixture's own
# session, so that generated requests also reach one that exists.
_id_text = st.characters(blacklist_categories=("Cs",))
session_ids = st.one_of(
    st.just("s"), st.text(_id_text, min_size=1, max_size=200), st.text(_id_text, min_size=201, max_size=260)
)
_json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=12)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)
json_texts = st.one_of(
    st.fixed_dictionaries({"query": st.text(max_size=30)}, optional={"top_k": _json_values}).map(json.dumps),
    st.dictionaries(st.sampled_from(["content", "id", "query", "scope", "reason"]), _json_values).map(json.dumps),
    st.integers(0, 6000).map(lambda depth: '{"query": ' + "[" * depth + '"x"' + "]" * depth + "}"),
    st.sampled_from(
        ['{"query": NaN}', '{"top_k": 1e999}', '{"content": "a\\u0000b"}', '{"query": "\\ud800"}', "not json", ""]
    ),
)
schemathesis.openapi.format("memory-cursor", cursors)
schemathesis.openapi.format("memory-session-id", session_ids)
schemathesis.openapi.format("memory-json-text", json_texts)
schemathesis.openapi.format("memory-tool-name", st.one_of(st.sampled_from(list(TOOLS)), st.text(max_size=100)))


def _hostile_formats(raw: dict) -> dict:
    for operations in raw["paths"].values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                if parameter["name"] == "cursor":
                    parameter["schema"]["format"] = "memory-cursor"
                elif parameter["name"] == "session_id":
                    parameter["schema"] = {"type": "string", "format": "memory-session-id"}
    tool_call = raw["components"]["schemas"]["ToolCallInput"]["properties"]
    next(option for option in tool_call["arguments"]["oneOf"] if option["type"] == "string")["format"] = (
        "memory-json-text"
    )
    # Arguments are decoded only for a tool that exists, so names are mostly real ones.
    tool_call["name"] = {"type": "string", "format": "memory-tool-name"}
    # What the serializers refuse and the generated schema leaves out (empty lists, blank content): stated here, so
    # that more of the generated bodies are valid and reach the database.
    raw["components"]["schemas"]["MessagesAppendInput"]["properties"]["messages"]["minItems"] = 1
    raw["components"]["schemas"]["MessageInput"]["properties"]["content"]["minLength"] = 1
    return raw


# --- links: what an operation creates or lists feeds the path parameters of the operations on it -------------------

LINKS = {
    ("/api/v1/sessions", "post", "201"): ("$response.body#/session", "session_id", "/api/v1/sessions/{session_id}"),
    ("/api/v1/facts", "post", "201"): ("$response.body#/id", "fact_id", "/api/v1/facts/{fact_id}"),
    ("/api/v1/facts", "get", "200"): ("$response.body#/results/0/id", "fact_id", "/api/v1/facts/{fact_id}"),
    ("/api/v1/reflections", "post", "201"): (
        "$response.body#/id",
        "reflection_id",
        "/api/v1/reflections/{reflection_id}",
    ),
    ("/api/v1/blobs", "get", "200"): ("$response.body#/results/0/id", "memory_id", "/api/v1/blobs/{memory_id}"),
    ("/api/v1/documents", "post", "201"): ("$response.body#/id", "document_id", "/api/v1/documents/{document_id}"),
}


def _links(raw: dict) -> dict:
    for (path, method, status), (expression, parameter, target_prefix) in LINKS.items():
        response = raw["paths"][path][method]["responses"][status]
        targets = [
            (target_method, operation["operationId"])
            for target_path, operations in raw["paths"].items()
            if target_path.startswith(target_prefix)
            for target_method, operation in operations.items()
        ]
        response["links"] = {
            f"{target_method}_{operation_id}": {"operationId": operation_id, "parameters": {parameter: expression}}
            for target_method, operation_id in targets
        }
    return raw


RAW_SCHEMA = _links(
    _hostile_formats(json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True), default=str)))
)
schema = schemathesis.openapi.from_dict(RAW_SCHEMA)
schema.app = get_wsgi_application()


# --- checks -----------------------------------------------------------------------------------------------------------


def no_undocumented_server_error(ctx, response, case) -> None:
    tally_add("API requests (schemathesis)")
    documented = set(case.operation.definition.raw.get("responses", {}))
    if response.status_code >= 500 and str(response.status_code) not in documented:
        tally_add(SERVER_ERRORS)
        raise AssertionError(
            f"{response.status_code} from {case.method} {case.formatted_path}: {response.content[:500]!r}"
        )


def errors_in_the_one_shape_naming_their_fields(ctx, response, case) -> None:
    if response.status_code < 400 or response.status_code == 503:
        return
    body = json.loads(response.content)
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "fields"}, body
    if response.status_code == 400:
        assert body["error"]["fields"], f"a 400 that names no field: {case.method} {case.formatted_path}: {body}"


def invalid_input_refused(ctx, response, case) -> None:
    """schemathesis' negative_data_rejection: input the schema calls invalid is refused. Not for the tool call, whose
    body carries this module's formats (a value "violating" one is any string, which the API rightly takes), nor
    when the query holds parameters the operation does not declare: an object generated for a query parameter is
    sent as parameters named after its keys, and unknown parameters are ignored, as unknown fields are (docs/api.md),
    so what the API receives is a valid request. A 413 refuses too (a body over the size limit, before it is read),
    a status schemathesis does not count as refusing."""
    if case.operation.path == "/api/v1/tools/call" or response.status_code == 413:
        return
    declared = {parameter["name"] for parameter in case.operation.definition.raw.get("parameters", [])}
    if set(case.query or {}) - declared:
        return
    negative_data_rejection(ctx, response, case)


CHECKS = [
    no_undocumented_server_error,
    response_schema_conformance,
    errors_in_the_one_shape_naming_their_fields,
    invalid_input_refused,
]


# --- fixtures ---------------------------------------------------------------------------------------------------------


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


# --- the runs ---------------------------------------------------------------------------------------------------------

_RUN_SETTINGS = {
    "derandomize": not FUZZING,
    "deadline": None,
    "suppress_health_check": list(HealthCheck),
    "database": None,
}


@schema.parametrize()
@hypothesis_settings(
    max_examples=examples(EXAMPLES_PER_OPERATION),
    phases=[Phase.generate],  # schemathesis' boundary-value phase alone costs minutes; test_hostile_input covers it
    **_RUN_SETTINGS,
)
def test_every_operation_with_valid_and_invalid_input(case, api_headers):
    """schemathesis generates valid and invalid input (positive and negative modes) for each operation."""
    case.call_and_validate(headers=api_headers, checks=CHECKS)


def map_body(context, body):
    """An append that names its user, as most do, so that a generated session id reaches the insert that creates
    its session (where an id longer than its column once failed)."""
    if context.operation.path == "/api/v1/sessions/{session_id}/messages" and isinstance(body, dict):
        body.setdefault("user", "u")
    return body


@schema.hooks.apply(map_body)
@schema.include(operation_id=PROBED_OPERATIONS).parametrize()
@hypothesis_settings(max_examples=examples(EXAMPLES_PER_PROBED_OPERATION), phases=[Phase.generate], **_RUN_SETTINGS)
def test_where_the_probe_found_server_errors(case, api_headers):
    """More examples where hostile values do the most: they would have found the probe's 500s (cursors that decode
    to garbage, a session id longer than its column, arguments nested 5,000 deep), each of which fails this test
    on the code before its fix."""
    case.call_and_validate(headers=api_headers, checks=CHECKS)


def test_link_driven_scenarios(api_headers):
    """Scenarios of up to STEPS_PER_SCENARIO calls chained by the schema's links."""

    class Scenarios(schema.as_state_machine()):
        """Each scenario starts from the same rows (a savepoint rolled back after it), so that Hypothesis can replay
        one exactly."""

        def setup(self):
            self.savepoint = transaction.savepoint()

        def teardown(self):
            transaction.savepoint_rollback(self.savepoint)

        def get_call_kwargs(self, case):
            return {"headers": api_headers}

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            case.validate_response(response, checks=CHECKS, headers=api_headers)

    Scenarios.run(
        settings=hypothesis_settings(
            max_examples=examples(SCENARIOS),
            stateful_step_count=STEPS_PER_SCENARIO,
            phases=[Phase.generate],
            **_RUN_SETTINGS,
        )
    )
