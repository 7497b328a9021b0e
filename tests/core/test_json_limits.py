"""Properties of the input validators that every request goes through: JSON within the limits (core/api/json_limits.py,
for bodies and for JSON carried in strings), strict text fields, text cut to a character limit. Hypothesis generates
the inputs; the suite runs a bounded, derandomised number (tests/fuzzing.py)."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rest_framework import serializers

from core.api.fields import StrictCharField
from core.api.json_limits import MAX_JSON_DEPTH, TOO_DEEP, JSONProblem, json_decode, json_unstorable_fields, json_walk
from core.llm.limits import text_cap
from tests.fuzzing import examples, tally_add

pytestmark = pytest.mark.fuzz

keys = st.text(max_size=8)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4)
)


def _decoded_or_problem(text: str):
    try:
        return json_decode(text), None
    except JSONProblem as problem:
        return None, problem


@given(text=st.one_of(st.text(max_size=200), json_values.map(json.dumps), st.sampled_from(["NaN", "[1e999]", "-"])))
@settings(max_examples=examples(300))
def test_any_text_decodes_or_is_a_problem_naming_where(text):
    tally_add("validator inputs")
    data, problem = _decoded_or_problem(text)
    if problem is not None:
        assert problem.fields and all(isinstance(path, str) for path in problem.fields)


@given(value=json_values)
@settings(max_examples=examples(200))
def test_json_this_service_can_hold_comes_back_as_it_was(value):
    tally_add("validator inputs")
    data, problem = _decoded_or_problem(json.dumps(value))
    assert problem is None
    assert json.dumps(data, sort_keys=True) == json.dumps(value, sort_keys=True)


def _escaped(key: str) -> str:
    """How a path shows a key: escaped to ASCII, so that an error message can always be printed."""
    return key.encode("unicode_escape", errors="backslashreplace").decode("ascii")


def _nested(depth: int, *, key: str, as_list: bool) -> str:
    opening, closing = ("[", "]") if as_list else (f'{{"{key}": ', "}")
    return opening * depth + "1" + closing * depth


@given(depth=st.integers(0, 6000), key=st.sampled_from(["a", "x.y", "é", "0"]), as_list=st.booleans())
@settings(max_examples=examples(60))
@example(depth=MAX_JSON_DEPTH, key="a", as_list=False)
@example(depth=MAX_JSON_DEPTH + 1, key="a", as_list=False)
@example(depth=200_000, key="a", as_list=True)
def test_nesting_is_refused_past_the_limit_at_the_path_where_it_goes_too_deep(depth, key, as_list):
    """The limit holds whether the decoder returns (the walk finds the path) or gives up (the scanner does)."""
    tally_add("validator inputs")
    data, problem = _decoded_or_problem(_nested(depth, key=key, as_list=as_list))
    problems = problem.fields if problem else json_unstorable_fields(data)

    component = "0" if as_list else _escaped(key)
    if depth <= MAX_JSON_DEPTH:
        assert problems == {}
    else:
        assert problems == {".".join([component] * MAX_JSON_DEPTH): [TOO_DEEP]}


@given(value=json_values, bad=st.sampled_from(["\x00", "\ud800", "a\x00b"]))
@settings(max_examples=examples(200))
@example(value={"": "\x00"}, bad="\x00")
def test_text_postgresql_cannot_store_is_named_by_its_path(value, bad):
    tally_add("validator inputs")
    in_a_list = json_unstorable_fields({"field": [value, bad]})
    as_a_key = json_unstorable_fields({"field": {bad: value}})

    assert "field.1" in in_a_list
    assert as_a_key[f"field.{_escaped(bad)}"][0].startswith("Field name:")


@given(literal=st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-1e400", "9" * 5000]), wrapped=st.booleans())
@settings(max_examples=examples(30))
def test_numbers_nothing_here_can_read_are_named_by_their_path(literal, wrapped):
    tally_add("validator inputs")
    text = f'{{"outer": {{"value": {literal}}}}}' if wrapped else f'{{"value": [{literal}]}}'
    data, problem = _decoded_or_problem(text)

    assert data is None
    assert list(problem.fields) == (["outer.value"] if wrapped else ["value.0"])


@given(value=json_values)
@settings(max_examples=examples(100))
def test_the_walk_visits_every_value_once_with_its_depth(value):
    tally_add("validator inputs")
    visited = list(json_walk(value))
    assert visited[0] == ("", value, 0, None)
    assert all(depth <= MAX_JSON_DEPTH for _, _, depth, _ in visited)


class _Strict(serializers.Serializer):
    content = StrictCharField(max_length=50)


class _Plain(serializers.Serializer):
    content = serializers.CharField(max_length=50)


@given(value=st.one_of(json_values, st.text(max_size=60)))
@settings(max_examples=examples(200))
@example(value=" " + "x" * 50)
def test_a_strict_text_field_takes_strings_only_and_strings_as_drf_does(value):
    tally_add("validator inputs")
    strict, plain = _Strict(data={"content": value}), _Plain(data={"content": value})
    if isinstance(value, str):
        # Its length is checked as sent (the schema's maxLength), DRF's after trimming.
        assert strict.is_valid() == (plain.is_valid() and len(value) <= 50)
        assert strict.is_valid() is False or strict.validated_data == plain.validated_data
    else:
        assert not strict.is_valid()
        assert strict.errors["content"] == ["Not a valid string."] or value is None


@given(text=st.text(max_size=300), chars=st.integers(1, 200))
@settings(max_examples=examples(300))
def test_text_cut_to_a_limit_is_a_prefix_within_it(text, chars):
    tally_add("validator inputs")
    cut = text_cap(text=text, chars=chars)
    assert len(cut) <= chars
    assert text.startswith(cut)
    if len(text) <= chars:
        assert cut == text
