"""Post-processing of the OpenAPI schema, so that it says what the API accepts."""

from __future__ import annotations


def optional_query_parameters_allow_empty(result: dict, generator: object, request: object, public: bool) -> dict:
    """An optional query parameter given empty (`?user=`) counts as not given, as in HTML forms (DRF's reading of
    query strings): the schema says so with `allowEmptyValue`, so that a client or a fuzzer can tell."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "query" and not parameter.get("required"):
                    parameter["allowEmptyValue"] = True
    return result
