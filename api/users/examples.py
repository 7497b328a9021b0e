"""The OpenAPI examples of the users API, kept out of the views that show them."""

from drf_spectacular.utils import OpenApiExample

USER_DETAIL = OpenApiExample(
    "a user and what is kept about them",
    value={
        "user": "gene",
        "metadata": {},
        "created_at": "2026-03-01T09:12:00Z",
        "last_active_at": "2026-03-14T18:40:11Z",
        "memory": {
            "current_facts": 12,
            "closed_fact_versions": 3,
            "fact_embeddings": 15,
            "buffered_reflections": 2,
            "absorbed_reflections": 6,
            "blobs": 2,
            "past_blob_versions": 4,
            "sessions": 5,
            "messages": 184,
            "message_embeddings": 184,
            "formation_jobs": 9,
            "consolidation_jobs": 3,
            "entities": 7,
            "relations": 9,
            "held_memories": 0,
            "feedback": 1,
        },
    },
    response_only=True,
)

USER_ERASED = OpenApiExample(
    "erased",
    value={
        "user": "gene",
        "already_erased": False,
        "erasure": {
            "id": 41,
            "erased_at": "2026-03-15T10:00:02Z",
            "requested_by": "api key mem_3kX9aQ2b… (backend) of agent support-bot",
            "deleted_counts": {"conversations.Message": 184, "conversations.Session": 5, "facts.Fact": 15},
            "user_external_id_hash": "4f1c…",
        },
    },
    response_only=True,
)

USER_EXPORT = OpenApiExample(
    "the first lines of an export",
    value='{"kind": "export", "format": "agent-memory-native", "version": 1, ...}\n{"kind": "user", ...}\n',
    response_only=True,
    media_type="application/x-ndjson",
)

USER_LIST = OpenApiExample(
    "users inactive since a date",
    value={
        "next": None,
        "previous": None,
        "results": [
            {
                "user": "gene",
                "metadata": {},
                "created_at": "2025-03-01T09:12:00Z",
                "last_active_at": "2025-06-14T18:40:11Z",
            }
        ],
    },
    response_only=True,
)

USER_PROFILE = OpenApiExample(
    "a user's profile by category",
    value={
        "user": "melanie",
        "categories": [
            {
                "category": "activities",
                "name": "Activities and hobbies",
                "entries": [
                    {
                        "value": "pottery",
                        "mentions": 2,
                        "last_mentioned": "2023-07-15T13:51:00Z",
                        "world_time": {
                            "start": None,
                            "start_precision": "",
                            "end": None,
                            "end_precision": "",
                            "holds_now": True,
                        },
                        "facts": [
                            {
                                "id": 418,
                                "content": "Melanie made a bowl at her pottery class.",
                                "version": 1,
                                "recorded_at": "2023-07-15T13:51:00Z",
                                "world_time": {
                                    "start": "2023-07-14",
                                    "start_precision": "day",
                                    "end": "2023-07-15",
                                    "end_precision": "day",
                                    "holds_now": False,
                                },
                            }
                        ],
                    }
                ],
                "history": [],
            }
        ],
        "attributes": [{"key": "home_city", "value": "Denver", "memory_id": 12}],
        "truncated": False,
    },
    response_only=True,
)
