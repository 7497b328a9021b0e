"""A fuzzing campaign against the OpenAPI schema with schemathesis, in-process through the WSGI app, aimed at what the
second hostile probe (issue 17) broke:

- every operation, stateless, with valid input (positive generation, with the hostile values below) and with invalid
  input (negative generation against the schema as published, which must be refused);
- stateful, link-driven scenarios: a created session, fact, reflection or document, or the first item of a list,
  feeds the path parameters of the operations on it, so they reach rows that exist;
- hostile values where the schema says little: cursors built the way DRF encodes them (base64 of a query string)
  with any position, session ids of any content, and JSON text inside a tool call's `arguments` nested thousands of
  levels deep or holding NaN, 1e999, NUL and lone surrogates.

Checks on every response: no 5xx the schema does not document (the chat proxy's 503 without an LLM is), the schema's
response shapes, the one error shape for every error, and a 400 that names its fields; invalid input is refused.
Bounded and derandomised in `make test`; `make fuzz` runs FUZZ_SCALE times more with fresh randomness and prints the
tally (tests/fuzzing.py)."""

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

from agents.services.api_keys import api_key_create
from agents.services.operator_keys import operator_key_create
from conversations.services.ingestion import MessageInput, session_append_messages
from formation.tools.registry import TOOLS
from tests.factories import AgentFactory
from tests.fuzzing import FUZZING, SERVER_ERRORS, examples, tally_add

pytestmark = pytest.mark.fuzz

EXAMPLES_PER_OPERATION = 4
# Where the probe of issue 17 found 500s (path ids written to the database, cursors, JSON inside strings) and invalid
# input taken (a number as text, a bad page size).
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
                    # Required here (valid input only is generated from this schema): every list request carries one.
                    parameter["schema"]["format"] = "memory-cursor"
                    parameter["required"] = True
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


def _product_schema() -> dict:
    return json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True), default=str))


def _without_security(raw: dict) -> dict:
    """Every request carries the agent's key (these tests send it), so invalid input is not spent on the
    Authorization header."""
    for operations in raw["paths"].values():
        for operation in operations.values():
            operation.pop("security", None)
    raw.pop("security", None)
    return raw


# Valid input, with the hostile formats and the links above; invalid input against the schema as the API publishes it,
# so that what counts as invalid is the API's own contract (a value "violating" one of this module's formats would
# be any string, which the API rightly takes).
schema = schemathesis.openapi.from_dict(
    _links(_hostile_formats(_product_schema())),
    config=schemathesis.Config.from_dict({"generation": {"mode": "positive"}}),
)
product_schema = schemathesis.openapi.from_dict(
    _without_security(_product_schema()), config=schemathesis.Config.from_dict({"generation": {"mode": "negative"}})
)
schema.app = product_schema.app = get_wsgi_application()


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
    """schemathesis' negative_data_rejection: input the schema calls invalid is refused. Not where what was made
    invalid never reaches the API as such:
    - headers: the invalid one is the Authorization header, which these tests replace with the agent's key (the only
      other header the schema declares, If-None-Match, takes any string);
    - a query parameter generated as a list or an object: serialized, it is sent as plain values (a list of one as
      one, an object as parameters named after its keys, which the API ignores as it ignores unknown fields,
      docs/api.md), and the request the API receives is a valid one (a list of several is refused, as a repeated
      parameter).
    A 413 (a body over the size limit, refused before it is read) refuses too, though schemathesis does not count it."""
    negative = {
        str(location).rsplit(".", 1)[-1].lower()
        for location, info in case.meta.components.items()
        if info.mode.is_negative
    }
    if negative <= {"header", "cookie"} or response.status_code == 413:
        return
    if any(isinstance(value, list | dict) for value in (case.query or {}).values()):
        return
    negative_data_rejection(ctx, response, case)


CHECKS = [no_undocumented_server_error, response_schema_conformance, errors_in_the_one_shape_naming_their_fields]


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
    agent = AgentFactory(external_id="fuzzed-agent")
    session_append_messages(
        agent=agent,
        user_external_id="u",
        session_external_id="s",
        messages=[MessageInput(role="user", content="I keep bees on my roof.")],
    )
    _, key = api_key_create(agent=agent)
    _, operator_key = operator_key_create(name="fuzzing")
    return _KeysByPath({"Authorization": f"Bearer {key}"}, operator={"Authorization": f"Bearer {operator_key}"})


class _KeysByPath(dict):
    """The agent's key, and for the administration API (which refuses it) an operator key: `for_(case)`."""

    def __init__(self, agent: dict[str, str], *, operator: dict[str, str]) -> None:
        super().__init__(agent)
        self.operator = operator

    def for_(self, case) -> dict[str, str]:
        return self.operator if case.path.startswith("/api/v1/admin/") else dict(self)


# --- the runs ---------------------------------------------------------------------------------------------------------

_RUN_SETTINGS = {
    "derandomize": not FUZZING,
    "deadline": None,
    "suppress_health_check": list(HealthCheck),
    "database": None,
}


@schema.parametrize()
@hypothesis_settings(max_examples=examples(EXAMPLES_PER_OPERATION), phases=[Phase.generate], **_RUN_SETTINGS)
def test_every_operation_with_valid_input(case, api_headers):
    case.call_and_validate(headers=api_headers.for_(case), checks=CHECKS)


# GET /tools takes no input at all: there is nothing to make invalid.
@product_schema.exclude(operation_id="api_v1_tools_retrieve").parametrize()
@hypothesis_settings(max_examples=examples(EXAMPLES_PER_OPERATION), phases=[Phase.generate], **_RUN_SETTINGS)
def test_every_operation_with_invalid_input(case, api_headers):
    case.call_and_validate(headers=api_headers.for_(case), checks=[*CHECKS, invalid_input_refused])


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


def map_path_parameters(context, path_parameters):
    """Invalid input aimed at a session that exists, so that it reaches what the session's operations check (a
    session id itself too long for its column is left as generated)."""
    if path_parameters and len(path_parameters.get("session_id", "s" * 201)) <= 200:
        path_parameters["session_id"] = "s"
    return path_parameters


@product_schema.hooks.apply(map_path_parameters)
@product_schema.include(operation_id=PROBED_OPERATIONS).parametrize()
@hypothesis_settings(max_examples=examples(EXAMPLES_PER_PROBED_OPERATION), phases=[Phase.generate], **_RUN_SETTINGS)
def test_where_the_probe_found_invalid_input_accepted(case, api_headers):
    """More invalid input where the probe found it taken: a number as text, a page size out of range."""
    case.call_and_validate(headers=api_headers, checks=[*CHECKS, invalid_input_refused])


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
            return {"headers": api_headers.for_(case)}

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            case.validate_response(response, checks=CHECKS, headers=api_headers.for_(case))

    Scenarios.run(
        settings=hypothesis_settings(
            max_examples=examples(SCENARIOS),
            stateful_step_count=STEPS_PER_SCENARIO,
            phases=[Phase.generate],
            **_RUN_SETTINGS,
        )
    )
