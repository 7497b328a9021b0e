"""The users, feedback, session-delete and administration operations are in the OpenAPI schema, each with an example
(of its request, or of its answer where it takes no body), and the administration API under the operator key's
security scheme only."""

from __future__ import annotations

from drf_spectacular.generators import SchemaGenerator

SCHEMA = SchemaGenerator().get_schema(request=None, public=True)
OPERATIONS = [
    ("get", "/api/v1/users"),
    ("get", "/api/v1/users/{user_id}"),
    ("get", "/api/v1/users/{user_id}/export"),
    ("delete", "/api/v1/users/{user_id}"),
    ("delete", "/api/v1/sessions/{session_id}"),
    ("post", "/api/v1/facts/{fact_id}/feedback"),
    ("get", "/api/v1/admin/agents"),
    ("post", "/api/v1/admin/agents"),
    ("get", "/api/v1/admin/agents/{agent_id}"),
    ("patch", "/api/v1/admin/agents/{agent_id}"),
    ("post", "/api/v1/admin/agents/{agent_id}/keys"),
    ("post", "/api/v1/admin/agents/{agent_id}/webhooks"),
    ("get", "/api/v1/admin/agents/{agent_id}/webhooks/{webhook_id}"),
    ("patch", "/api/v1/admin/agents/{agent_id}/webhooks/{webhook_id}"),
    ("get", "/api/v1/admin/agents/{agent_id}/webhooks/{webhook_id}/deliveries"),
]


def _examples(operation: dict) -> list:
    found = []
    for part in [operation.get("requestBody", {}), *operation.get("responses", {}).values()]:
        for content in part.get("content", {}).values():
            found += list(content.get("examples", {}))
    return found


def test_each_new_operation_is_in_the_schema_with_an_example():
    missing = [f"{method} {path}" for method, path in OPERATIONS if not _examples(SCHEMA["paths"][path][method])]

    assert missing == []


def test_the_administration_api_is_under_the_operator_key_scheme_alone():
    schemes = {
        tuple(sorted(name for requirement in operation.get("security", []) for name in requirement))
        for path, operations in SCHEMA["paths"].items()
        if path.startswith("/api/v1/admin/")
        for operation in operations.values()
    }

    assert schemes == {("OperatorKey", "cookieAuth")}
    assert SCHEMA["components"]["securitySchemes"]["OperatorKey"]["scheme"] == "bearer"
