"""The append endpoint validates well-formed bodies with plain code; it must agree with the serializer it stands in
for on every body it accepts (anything else goes through the serializer itself)."""

import json
import random

from conversations.api.serializers import (
    MessagesAppendInputSerializer,
    _messages_append_input_plain,
    messages_append_input_validated,
)

VALUES = [
    "", " ", "  padded ", "hello", "a" * 201, " " + "a" * 200 + " ", "x\x00y", "héllo", "日本", 5, 1.5, True, None,
    [], {}, {"a": 1, "b": [1, {"c": None}]}, "2026-01-01T00:00:00Z", "2026-01-01T10:00:00+02:00", "2026-01-01",
    "not a date", "user", "assistant", "tool", "system", "other", "USER",
]  # fmt: skip
KEYS = ["role", "content", "created_at", "idempotency_key", "metadata", "unknown"]


def _random_body(rng: random.Random):
    def message():
        if rng.random() < 0.05:
            return rng.choice(VALUES)
        item = {"role": rng.choice(["user", "assistant"]), "content": "hi there"}
        for key in KEYS:
            if rng.random() < 0.3:
                item[key] = rng.choice(VALUES)
            elif rng.random() < 0.1:
                item.pop(key, None)
        return item

    body = {"messages": [message() for _ in range(rng.randint(0, 3))]}
    if rng.random() < 0.5:
        body["user"] = rng.choice(VALUES)
    return rng.choice(VALUES) if rng.random() < 0.02 else body


def test_plain_validation_accepts_only_what_the_serializer_accepts_with_the_same_result():
    rng = random.Random(5)
    accepted = 0
    for _ in range(5000):
        body = _random_body(rng)
        plain = _messages_append_input_plain(body)
        if plain is None:
            continue
        accepted += 1
        serializer = MessagesAppendInputSerializer(data=body)
        assert serializer.is_valid(), (body, serializer.errors)
        assert json.dumps(plain, default=repr, sort_keys=True) == json.dumps(
            serializer.validated_data, default=repr, sort_keys=True
        ), body
    assert accepted > 100


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
