from django.conf import settings
from rest_framework import serializers

from conversations.models import Message, Session
from conversations.services.ingestion import MAX_MESSAGES_PER_REQUEST


class SessionCreateInputSerializer(serializers.Serializer):
    user = serializers.CharField(max_length=200, help_text="The end user's id in your system.")
    session = serializers.RegexField(
        r"^[^/]+$",
        max_length=200,
        help_text="The session's id in your system (no '/': it is part of the URL path).",
        error_messages={"invalid": "must not contain '/'."},
    )


class SessionOutputSerializer(serializers.ModelSerializer):
    session = serializers.CharField(source="external_id")
    user = serializers.CharField(source="user.external_id")

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
            "formed_through_message_id",
            "last_formed_at",
        ]


class MessageInputSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Message.Role.choices)
    content = serializers.CharField(max_length=settings.MESSAGE_MAX_CHARS, trim_whitespace=False)
    created_at = serializers.DateTimeField(required=False, help_text="When it was said (imports); default now.")
    idempotency_key = serializers.CharField(
        max_length=200, required=False, help_text="A retried request with the same key stores nothing twice."
    )
    metadata = serializers.DictField(required=False, default=dict)


class MessagesAppendInputSerializer(serializers.Serializer):
    user = serializers.CharField(
        max_length=200, required=False, help_text="Required when the session does not exist yet."
    )
    messages = MessageInputSerializer(many=True, allow_empty=False, max_length=MAX_MESSAGES_PER_REQUEST)


class MessageOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = Message
        fields = ["id", "role", "content", "token_count", "created_at", "idempotency_key", "metadata"]


class MessagesAppendOutputSerializer(serializers.Serializer):
    session = SessionOutputSerializer()
    created_count = serializers.IntegerField()
    messages = MessageOutputSerializer(many=True)


class FormationQueuedOutputSerializer(serializers.Serializer):
    session = SessionOutputSerializer()
    queued = serializers.BooleanField(help_text="False when formation was already queued or running.")
