import re
from functools import cached_property
from typing import Any, cast

from django.conf import settings
from rest_framework import serializers

from conversations.models import Message, Session
from conversations.services.ingestion import MAX_MESSAGES_PER_REQUEST
from core.api.fields import MetadataField, StrictCharField, StrictRegexField, metadata_size_problem
from formation.services.formation_holds import session_waiting_detail

# The length of the external id columns (agent, user, session): longer ids are a 400, never a failed insert.
EXTERNAL_ID_MAX_LENGTH = 200


class SessionCreateInputSerializer(serializers.Serializer):
    user = StrictCharField(max_length=EXTERNAL_ID_MAX_LENGTH, help_text="The end user's id in your system.")
    session = StrictRegexField(
        r"^[^/]+$",
        max_length=EXTERNAL_ID_MAX_LENGTH,
        help_text="The session's id in your system (no '/': it is part of the URL path).",
        error_messages={"invalid": "must not contain '/'."},
    )


class SessionOutputSerializer(serializers.ModelSerializer):
    session = serializers.CharField(source="external_id")
    user = serializers.CharField(source="user.external_id")
    formation_waiting_detail = serializers.SerializerMethodField(
        help_text="While formation_status is 'waiting': why, with today's figures and when it resumes."
    )

    class Meta:
        model = Session
        fields = [
            "session",
            "user",
            "started_at",
            "last_activity_at",
            "closed_at",
            "message_count",
            "token_count",
            "formation_status",
            "formation_waiting_reason",
            "formation_waiting_detail",
            "formed_through_message_id",
            "last_formed_at",
        ]

    def get_formation_waiting_detail(self, session: Session) -> str:
        return session_waiting_detail(session=session)


class SessionDeletedOutputSerializer(serializers.Serializer):
    session = serializers.CharField()
    deleted_counts = serializers.DictField(child=serializers.IntegerField(), help_text="Rows deleted, per kind.")


class MessageInputSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Message.Role.choices)
    content = StrictCharField(max_length=settings.MESSAGE_MAX_CHARS, trim_whitespace=False)
    created_at = serializers.DateTimeField(required=False, help_text="When it was said (imports); default now.")
    idempotency_key = StrictCharField(
        max_length=200,
        required=False,
        help_text="A retried request with the same key stores nothing twice; the same key with another role, "
        "content or metadata is a 409.",
    )
    metadata = MetadataField(required=False, default=dict)


class MessagesAppendInputSerializer(serializers.Serializer):
    user = StrictCharField(
        max_length=EXTERNAL_ID_MAX_LENGTH, required=False, help_text="Required when the session does not exist yet."
    )
    # many=True makes a ListSerializer, which takes max_length; the stubs type the child's __init__.
    messages = MessageInputSerializer(  # type: ignore[call-arg]
        many=True, allow_empty=False, max_length=MAX_MESSAGES_PER_REQUEST
    )


_SURROGATE = re.compile("[\ud800-\udfff]")
_ROLES = frozenset(Message.Role.values)
_CREATED_AT = MessageInputSerializer().fields["created_at"]


def messages_append_input_validated(data: Any) -> dict:
    """MessagesAppendInputSerializer's validated data. A well-formed body (the usual case: 100 messages of plain
    strings) is checked by plain code, several times cheaper than DRF's per-field machinery; anything it does not
    accept goes through the serializer itself, so results and error messages are the serializer's."""
    validated = _messages_append_input_plain(data)
    if validated is None:
        serializer = MessagesAppendInputSerializer(data=data)
        serializer.is_valid(raise_exception=True)
        validated = serializer.validated_data
    return validated


def _text(value: Any, *, max_length: int, trim: bool) -> str | None:
    """The CharField's value for a valid string, else None."""
    if type(value) is not str or len(value) > max_length:
        return None
    if trim:
        value = value.strip()
    if not value or len(value) > max_length or "\x00" in value or (not value.isascii() and _SURROGATE.search(value)):
        return None
    return value


def _messages_append_input_plain(data: Any) -> dict | None:
    if type(data) is not dict:
        return None
    messages = data.get("messages")
    if type(messages) is not list or not 0 < len(messages) <= MAX_MESSAGES_PER_REQUEST:
        return None
    validated: dict[str, Any] = {}
    if "user" in data:
        if (user := _text(data["user"], max_length=EXTERNAL_ID_MAX_LENGTH, trim=True)) is None:
            return None
        validated["user"] = user
    items = []
    for item in messages:
        if type(item) is not dict or type(item.get("role")) is not str or item["role"] not in _ROLES:
            return None
        content = _text(item.get("content"), max_length=settings.MESSAGE_MAX_CHARS, trim=False)
        if content is None:
            return None
        message = {"role": item["role"], "content": content}
        if "created_at" in item:
            try:
                message["created_at"] = _CREATED_AT.run_validation(item["created_at"])
            except serializers.ValidationError:
                return None
        if "idempotency_key" in item:
            if (key := _text(item["idempotency_key"], max_length=200, trim=True)) is None:
                return None
            message["idempotency_key"] = key
        metadata = item.get("metadata", {})
        if type(metadata) is not dict or (metadata and metadata_size_problem(metadata)):
            return None
        message["metadata"] = dict(metadata)
        items.append(message)
    validated["messages"] = items
    return validated


class MessageOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = Message
        fields = ["id", "role", "content", "token_count", "created_at", "idempotency_key", "metadata"]

    @cached_property
    def _columns(self) -> list[tuple[str, serializers.Field]]:
        return [(cast(str, field.field_name), field) for field in self._readable_fields]  # bound: named

    def to_representation(self, instance: Message) -> dict:
        # Every field is a column of the row: read directly, without DRF's per-field attribute lookup (100 times
        # per append). None stays None, as in ModelSerializer.
        return {
            name: None if (value := getattr(instance, name)) is None else field.to_representation(value)
            for name, field in self._columns
        }


class MessagesAppendOutputSerializer(serializers.Serializer):
    session = SessionOutputSerializer()
    created_count = serializers.IntegerField()
    messages = MessageOutputSerializer(many=True)


class FormationQueuedOutputSerializer(serializers.Serializer):
    session = SessionOutputSerializer()
    queued = serializers.BooleanField(help_text="False when formation was already queued or running.")
