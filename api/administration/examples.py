"""The OpenAPI examples of the administration API, kept out of the views that show them."""

from drf_spectacular.utils import OpenApiExample

AGENT_CREATE = OpenApiExample(
    "an agent for one customer",
    value={"agent": "acme-support", "name": "ACME support", "rag_enabled": True, "agent_memory_from_users": "review"},
    request_only=True,
)

AGENT_CHANGE = OpenApiExample(
    "stricter thresholds and a budget",
    value={"formation_msg_interval": 20, "llm_daily_token_budget": 2_000_000, "sensitive_data": "redact"},
    request_only=True,
)

KEY_CREATE = OpenApiExample("a key for the backend", value={"name": "backend"}, request_only=True)

KEY_CREATED = OpenApiExample(
    "the key, shown once",
    value={
        "id": 7,
        "prefix": "mem_Q2xv9aZr",
        "name": "backend",
        "created_at": "2026-03-15T10:00:00Z",
        "last_used_at": None,
        "revoked_at": None,
        "key": "mem_Q2xv9aZr...",
    },
    response_only=True,
)

WEBHOOK_CREATE = OpenApiExample(
    "fact changes and erasures",
    value={
        "url": "https://app.example.com/hooks/memory",
        "event_types": ["fact.created", "fact.updated", "fact.closed", "user.erased"],
        "description": "keeps the app's cache of memory in step",
    },
    request_only=True,
)

WEBHOOK_CHANGE = OpenApiExample("rotate the secret", value={"rotate_secret": True}, request_only=True)
