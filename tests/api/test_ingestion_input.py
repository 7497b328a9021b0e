"""The append endpoint validates well-formed bodies with plain code; it must agree with the serializer it stands in
for on every body it accepts (anything else goes through the serializer itself). Hypothesis generates the bodies."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from api.conversations.serializers import (
    MessagesAppendInputSerializer,
    _messages_append_input_plain,
    messages_append_input_validated,
)
from tests.fuzzing import examples, tally_add

pytestmark = pytest.mark.fuzz

VALUES = [
    "", " ", "  padded ", "hello", "a" * 201, " " + "a" * 200 + " ", "x\x00y", "héllo", "日本", 5, 1.5, True, None,
    [], {}, {"a": 1, "b": [1, {"c": None}]}, {"big": "m" * 70_000}, "2026-01-01T00:00:00Z",
    "2026-01-01T10:00:00+02:00", "2026-01-01", "not a date", "user", "assistant", "tool", "system", "other", "USER",
]  # fmt: skip
KEYS = ["role", "content", "created_at", "idempotency_key", "metadata", "unknown"]
values = st.one_of(st.sampled_from(VALUES), st.text(max_size=30))
messages = st.one_of(
    st.builds(
        lambda role, overrides, removed: {
            key: value
            for key, value in ({"role": role, "content": "hi there"} | overrides).items()
            if key not in removed
        },
        st.sampled_from(["user", "assistant"]),
        st.dictionaries(st.sampled_from(KEYS), values, max_size=3),
        st.sets(st.sampled_from(["role", "content"]), max_size=1),
    ),
    values,
)
bodies = st.one_of(
    st.fixed_dictionaries({"messages": st.lists(messages, max_size=3)}, optional={"user": values}),
    values,
)


@given(body=bodies)
@settings(max_examples=examples(1500))
def test_plain_validation_accepts_only_what_the_serializer_accepts_with_the_same_result(body):
    tally_add("validator inputs")
    plain = _messages_append_input_plain(body)
    if plain is None:
        return
    serializer = MessagesAppendInputSerializer(data=body)
    assert serializer.is_valid(), (body, serializer.errors)
    assert json.dumps(plain, default=repr, sort_keys=True) == json.dumps(
        serializer.validated_data, default=repr, sort_keys=True
    ), body


def test_a_typical_body_takes_the_plain_path():
    body = {
        "user": " user-1 ",
        "messages": [
            {"role": "user", "content": " I moved to Lisbon. ", "idempotency_key": " m-1 "},
            {"role": "assistant", "content": "How is it?", "metadata": {"model": "x"}},
        ],
    }
    assert _messages_append_input_plain(body) == {
        "user": "user-1",
        "messages": [
            {"role": "user", "content": " I moved to Lisbon. ", "idempotency_key": "m-1", "metadata": {}},
            {"role": "assistant", "content": "How is it?", "metadata": {"model": "x"}},
        ],
    }
    assert messages_append_input_validated(body) == _messages_append_input_plain(body)
