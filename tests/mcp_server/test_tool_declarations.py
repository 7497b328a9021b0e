"""One declaration per tool's arguments: the JSON Schema every tool shows a model (the REST tools, the MCP tools, the
`user` and `session` of an unpinned connection) is read from the serializer that validates the call, so the two agree:
whatever a schema allows is accepted, and a value just past each limit it states is refused with an error that names
the argument by its path and says why."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from django.utils.duration import duration_iso_string
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.models import Agent
from core.api.tool_schema import serializer_json_schema
from facts.selectors.timeline import TimelinePosition
from formation.tools.base import ToolError, arguments_validate
from formation.tools.registry import TOOLS
from mcp_server import tools as mcp_tools
from tests.fuzzing import examples, tally_add

ARGUMENTS = {name: tool.arguments for name, tool in TOOLS.items()} | {
    tool.name: tool.arguments for tool in mcp_tools.READ_TOOLS
}
SCOPE = mcp_tools._ScopeArguments


def _schemas() -> dict[str, dict]:
    """Each tool's inputSchema as an unpinned MCP connection lists it (every tool, with `user` and `session`)."""
    definitions = mcp_tools.memory_tool_definitions(caller=mcp_tools.Caller(agent=Agent(name="a", external_id="a")))
    return {definition["name"]: definition["inputSchema"] for definition in definitions}


def _validated(name: str, arguments: dict) -> None:
    scope = {key: arguments.pop(key) for key in ("user", "session") if key in arguments}
    arguments_validate(ARGUMENTS[name], arguments)
    if scope:
        arguments_validate(SCOPE, scope)


def _value(schema: dict, name: str = "") -> st.SearchStrategy:
    if name == "cursor":  # an opaque token the server issued (get_timeline's next_cursor), as its description says
        positions = st.builds(
            TimelinePosition,
            at=st.dates(),
            recorded_at=st.datetimes(timezones=st.just(UTC)),
            fact_id=st.integers(1, 2**63 - 1),
            closing=st.booleans(),
        )
        return positions.map(TimelinePosition.token)
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if schema["type"] == "boolean":
        return st.booleans()
    if schema["type"] == "integer":
        return st.integers(schema.get("minimum"), schema.get("maximum"))
    if schema["type"] == "array":
        return st.lists(_value(schema["items"]), min_size=schema.get("minItems", 0), max_size=schema.get("maxItems", 5))
    if schema.get("format") == "date":
        return st.dates().map(date.isoformat)
    if schema.get("format") == "date-time":
        return st.datetimes(timezones=st.just(UTC)).map(datetime.isoformat)
    if schema.get("format") == "duration":
        return st.timedeltas(min_value=timedelta(seconds=1), max_value=timedelta(days=3650)).map(duration_iso_string)
    longest = schema.get("maxLength", 10_000)
    if "pattern" in schema:
        return st.from_regex(schema["pattern"], fullmatch=True).filter(lambda text: len(text) <= longest)
    # Text a client can send and store: no control characters or lone surrogates, not only spaces.
    text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=schema.get("minLength", 0), max_size=60)
    return st.one_of(text, st.just("y" * longest)).filter(lambda value: value.strip())


@st.composite
def _tool_calls(draw) -> tuple[str, dict]:
    name = draw(st.sampled_from(sorted(_schemas())))
    schema = _schemas()[name]
    required = {key: _value(schema["properties"][key], key) for key in schema["required"]}
    optional = {key: _value(value, key) for key, value in schema["properties"].items() if key not in schema["required"]}
    arguments = draw(st.fixed_dictionaries(required, optional=optional))
    if arguments.get("time_to", "9999") < arguments.get("time_from", ""):  # a period ends after it starts, as said
        arguments["time_from"], arguments["time_to"] = arguments["time_to"], arguments["time_from"]
    return name, arguments


@given(call=_tool_calls())
@settings(max_examples=examples(300), deadline=None)
def test_whatever_a_tool_schema_allows_is_accepted(call):
    tally_add("validator inputs")
    name, arguments = call
    _validated(name, arguments)


def _past(limit: str, schema: dict):
    """A value just past one limit of a property."""
    return {
        "maxLength": lambda: "z" * (schema["maxLength"] + 1),
        "minLength": lambda: "",
        "pattern": lambda: "Not A Key!",
        "enum": lambda: "none-of-these",
        "maximum": lambda: schema["maximum"] + 1,
        "minimum": lambda: schema["minimum"] - 1,
        "maxItems": lambda: [_smallest(schema["items"])] * (schema["maxItems"] + 1),
        "format": lambda: f"not a {schema['format']}",
    }[limit]()


LIMITS = ("maxLength", "minLength", "pattern", "enum", "maximum", "minimum", "maxItems", "format")


def _just_past_each_limit(schema: dict) -> list[tuple[str, dict, str]]:
    """(what, arguments, the path the error must name) for each limit the schema states, with a valid rest."""
    valid = {key: _smallest(schema["properties"][key]) for key in schema["required"]}
    cases = []
    for key, value in schema["properties"].items():
        cases += [(f"{key} {limit}", valid | {key: _past(limit, value)}, key) for limit in LIMITS if limit in value]
        if "maxLength" in value.get("items", {}):
            too_long = ["z" * (value["items"]["maxLength"] + 1)]
            cases.append((f"{key} items.maxLength", valid | {key: too_long}, f"{key}.0"))
    return cases


def _smallest(schema: dict):
    if "enum" in schema:
        return schema["enum"][0]
    return {"boolean": False, "integer": schema.get("minimum", 1), "array": [], "string": "ok"}[schema["type"]]


CASES = [(name, *case) for name, schema in sorted(_schemas().items()) for case in _just_past_each_limit(schema)]


@pytest.mark.parametrize(("name", "what", "arguments", "path"), CASES, ids=[f"{c[0]}: {c[1]}" for c in CASES])
def test_a_value_past_a_limit_the_schema_states_is_refused_naming_its_path(name, what, arguments, path):
    with pytest.raises(ToolError) as refused:
        _validated(name, dict(arguments))

    assert list(refused.value.fields) == [path]
    reason = refused.value.fields[path][0]
    assert str(refused.value) == f"invalid arguments: {path}: {reason}"


def test_the_issue_s_limits_are_in_the_schemas_the_model_sees():
    schemas = _schemas()

    assert schemas["search_memory"]["properties"]["query"]["maxLength"] == 2000
    assert schemas["save_memory"]["properties"]["content"]["maxLength"] == 1000
    assert schemas["save_memory"]["properties"]["tags"]["maxItems"] == 20
    assert schemas["get_entity"]["properties"]["name"]["maxLength"] == 200
    for name, tool in TOOLS.items():
        assert tool.definition()["function"]["parameters"] == serializer_json_schema(tool.arguments), name


def test_an_error_inside_a_list_names_the_index_and_the_reason():
    with pytest.raises(ToolError) as refused:
        arguments_validate(TOOLS["save_memory"].arguments, {"content": "Gene plays the cello.", "tags": ["x" * 101]})

    assert str(refused.value) == "invalid arguments: tags.0: Ensure this field has no more than 100 characters."
    assert refused.value.fields == {"tags.0": ["Ensure this field has no more than 100 characters."]}
