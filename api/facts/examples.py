"""The OpenAPI examples of the facts API, kept out of the views that show them."""

from drf_spectacular.utils import OpenApiExample

DOCUMENT_LIST_RETURNS_POLICY = OpenApiExample(
    "returns policy",
    value={"title": "Returns policy", "content": "Returns are accepted within 30 days of purchase."},
)

FACT_DETAIL_NEW_CONTENT = OpenApiExample(
    "new content", value={"content": "Gene's birthday is March 16th", "reason": "typo"}
)

FACT_FEEDBACK_OUTDATED = OpenApiExample(
    "the user moved", value={"rating": "outdated", "note": "I don't live there any more", "user": "gene"}
)

FACT_LIST_FOR_A_WEEK = OpenApiExample(
    "remember this for a week",
    value={"user": "gene", "content": "Gene's hotel room is number 514", "expires_in": "P7D"},
)

FACT_LIST_A_USER_FACT = OpenApiExample(
    "a user fact",
    value={"user": "gene", "content": "Gene's birthday is March 15th", "tags": ["personal"]},
)

MEMORY_SEARCH_AS_IT_WAS_KNOWN_ON_A_DATE_DIVERSE_RESULTS = OpenApiExample(
    "as it was known on a date, diverse results",
    value={
        "query": "where does Gene live",
        "user": "gene",
        "as_of": "2026-01-01T00:00:00Z",
        "mmr_lambda": 0.7,
    },
)

MEMORY_SEARCH_WHAT_THE_AGENT_KNOWS_ABOUT_A_USER_S_BIRTHDAY = OpenApiExample(
    "what the agent knows about a user's birthday",
    value={"query": "When is Gene's birthday?", "user": "gene", "top_k": 5},
)

TOOL_CALL_AS_THE_MODEL_SENT_IT = OpenApiExample(
    "as the model sent it",
    value={
        "name": "search_memory",
        "arguments": '{"query": "When is Gene\'s birthday?"}',
        "user": "gene",
        "session": "s-42",
    },
)

TOOL_CALL_SAVING_A_FACT = OpenApiExample(
    "saving a fact",
    value={"name": "save_memory", "arguments": {"content": "Gene is vegetarian"}, "user": "gene"},
)
