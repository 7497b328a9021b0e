"""The OpenAPI examples of the conversations API, kept out of the views that show them."""

from drf_spectacular.utils import OpenApiExample

CHAT_COMPLETIONS_REPLY = OpenApiExample(
    "Reply",
    response_only=True,
    value={
        "id": "chatcmpl-123",
        "object": "chat.completion",
        "created": 1763800000,
        "model": "gpt-4.1-mini",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": "Sleep in a dark room after your shift…"},
            }
        ],
        "memory": {
            "user": "gene",
            "session": "s-42",
            "context": {
                "enabled": True,
                "included": True,
                "token_count": 52,
                "etag": '"5d41402abc4b2a76b9719d911017c592"',
                "blob_versions": {"agent": 3, "user": 2, "session": None},
                "reflection_ids": [41],
            },
            "facts": [
                {
                    "id": 97,
                    "content": "Gene works night shifts at Lyon hospital.",
                    "score": 1.0,
                    "similarity": 0.71,
                }
            ],
            "rag_enabled": True,
            "injected_tokens": 96,
            "stored_message_ids": [812, 813],
        },
    },
)

CHAT_COMPLETIONS_WITH_MEMORY = OpenApiExample(
    "With memory",
    request_only=True,
    value={
        "model": "gpt-4.1-mini",
        "messages": [{"role": "user", "content": "Any tips for my night shifts?"}],
        "temperature": 0.3,
        "memory_user": "gene",
        "memory_session": "s-42",
    },
)

MESSAGE_SEARCH_A_PAST_TURN = OpenApiExample(
    "a past turn", value={"query": "When did Gene adopt the puppy?", "user": "gene"}
)

SESSION_CREATE_NEW_SESSION = OpenApiExample("new session", value={"user": "user-42", "session": "chat-2026-11-22"})

SESSION_MESSAGES_TWO_TURNS = OpenApiExample(
    "two turns",
    value={
        "user": "user-42",
        "messages": [
            {"role": "user", "content": "I moved to Lisbon last month.", "idempotency_key": "m-1"},
            {"role": "assistant", "content": "How are you finding Lisbon?", "idempotency_key": "m-2"},
        ],
    },
)

SESSION_DELETED = OpenApiExample(
    "a session deleted",
    value={
        "session": "s-42",
        "deleted_counts": {
            "conversations.Message": 12,
            "conversations.MessageEmbedding": 12,
            "conversations.Session": 1,
            "formation.FormationJob": 1,
            "reflections.Reflection": 2,
        },
    },
    response_only=True,
)
