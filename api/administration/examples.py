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

AGENT = OpenApiExample(
    "an agent and its settings",
    value={
        "agent": "acme-support",
        "name": "ACME support",
        "rag_enabled": True,
        "always_in_context_enabled": True,
        "profile_in_context": True,
        "sensitive_data": "withhold",
        "agent_memory_from_users": "review",
        "reranker": "off",
        "formation_msg_interval": 20,
        "formation_token_interval": None,
        "cold_after_minutes": None,
        "min_messages_for_formation": None,
        "consolidation_threshold_agent": None,
        "consolidation_threshold_user": None,
        "consolidation_threshold_session": None,
        "blob_word_limit_agent": None,
        "blob_word_limit_user": None,
        "blob_word_limit_session": None,
        "max_current_facts_per_user": None,
        "max_current_facts_per_agent": None,
        "max_embedded_messages_per_session": None,
        "llm_daily_token_budget": 2000000,
        "created_at": "2026-03-15T10:00:00Z",
        "updated_at": "2026-03-15T10:05:00Z",
    },
    response_only=True,
)

WEBHOOK = OpenApiExample(
    "an endpoint",
    value={
        "id": 3,
        "url": "https://app.example.com/hooks/memory",
        "description": "keeps the app's cache of memory in step",
        "event_types": ["fact.created", "fact.updated", "fact.closed", "user.erased"],
        "is_active": True,
        "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "created_at": "2026-03-15T10:00:00Z",
        "updated_at": "2026-03-15T10:00:00Z",
    },
    response_only=True,
)

DELIVERIES = OpenApiExample(
    "a delivery being retried",
    value={
        "next": None,
        "previous": None,
        "results": [
            {
                "id": 88,
                "event_type": "fact.created",
                "message_id": "msg_9f2c41b7c0de4b7a8a1e6f0d2b3c4d5e",
                "event_created_at": "2026-03-15T10:01:00Z",
                "status": "pending",
                "attempts": 2,
                "last_attempt_at": "2026-03-15T10:01:06Z",
                "last_status_code": 503,
                "last_error": "HTTP 503: ",
                "next_attempt_at": "2026-03-15T10:02:06Z",
                "delivered_at": None,
            }
        ],
    },
    response_only=True,
)

AGENT_LIST = OpenApiExample(
    "a page of agents",
    value={"next": None, "previous": None, "results": [AGENT.value]},
    response_only=True,
)
