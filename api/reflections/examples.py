"""The OpenAPI examples of the reflections API, kept out of the views that show them."""

from drf_spectacular.utils import OpenApiExample

from core.safety.fencing import MEMORY_NOTICE_BLOCK

CONTEXT_TEXT_EXAMPLE = (
    f"<MemoryContext>\n{MEMORY_NOTICE_BLOCK}\n<AgentMemory>\nAnswers are short and cite sources.\n</AgentMemory>\n"
    "<UserMemory>\nGene is a nurse in Lyon who prefers answers in French.\nRecent:\n"
    "- Gene is preparing for a night-shift rotation.\n</UserMemory>\n</MemoryContext>"
)


BUNDLE_EXAMPLE_RESPONSE = {
    "query": "Any tips for my night shifts?",
    "token_budget": 400,
    "tokens_used": 131,
    "text": CONTEXT_TEXT_EXAMPLE
    + "\n\n<RecentTurns>\nuser: Any tips for my night shifts?\n</RecentTurns>"
    + "\n\n<RelevantFacts>\n- Gene works night shifts at Lyon hospital.\n</RelevantFacts>",
    "parts": {
        "notice": {"status": "in_context", "tokens": 0, "token_limit": 60, "text": "", "items": [], "omitted": 0},
        "context": {
            "status": "included",
            "tokens": 52,
            "token_limit": 2500,
            "text": CONTEXT_TEXT_EXAMPLE,
            "items": [],
            "omitted": 0,
        },
        "session_summary": {"status": "empty", "tokens": 0, "token_limit": 600, "text": "", "items": [], "omitted": 0},
        "recent_turns": {
            "status": "included",
            "tokens": 17,
            "token_limit": 1500,
            "text": "<RecentTurns>\nuser: Any tips for my night shifts?\n</RecentTurns>",
            "items": [
                {
                    "id": 812,
                    "role": "user",
                    "content": "Any tips for my night shifts?",
                    "created_at": "2026-11-20T21:04:11+00:00",
                    "truncated": False,
                }
            ],
            "omitted": 0,
        },
        "facts": {
            "status": "included",
            "tokens": 23,
            "token_limit": 800,
            "text": "<RelevantFacts>\n- Gene works night shifts at Lyon hospital.\n</RelevantFacts>",
            "items": [
                {
                    "id": 97,
                    "content": "Gene works night shifts at Lyon hospital.",
                    "scopes": ["user"],
                    "score": 1.0,
                    "similarity": 0.71,
                    "vector_rank": 1,
                    "text_rank": 1,
                }
            ],
            "omitted": 0,
        },
        "similar_messages": {"status": "empty", "tokens": 0, "token_limit": 600, "text": "", "items": [], "omitted": 0},
    },
}


CONSOLIDATED_MEMORY_DETAIL_FIX_A_BLOB = OpenApiExample(
    "fix a blob",
    value={"content": "Gene lives in Lisbon and prefers Spanish.", "expected_version": 3},
)

MEMORY_BUNDLE_BUNDLE = OpenApiExample("Bundle", response_only=True, value=BUNDLE_EXAMPLE_RESPONSE)

MEMORY_BUNDLE_BUNDLE_FOR_A_PROMPT = OpenApiExample(
    "Bundle for a prompt",
    request_only=True,
    value={
        "query": "Any tips for my night shifts?",
        "user": "gene",
        "session": "s-42",
        "token_budget": 400,
    },
)

MEMORY_CONTEXT_BLOCK_FOR_A_USER_S_SESSION = OpenApiExample(
    "Block for a user's session",
    response_only=True,
    value={
        "text": CONTEXT_TEXT_EXAMPLE,
        "parts": {
            "agent": {
                "blob": "Answers are short and cite sources.",
                "blob_version": 3,
                "recent_reflections": [],
            },
            "user": {
                "blob": "Gene is a nurse in Lyon who prefers answers in French.",
                "blob_version": 2,
                "recent_reflections": [{"id": 41, "content": "Gene is preparing for a night-shift rotation."}],
            },
            "session": {"blob": "", "blob_version": None, "recent_reflections": []},
        },
        "token_count": 52,
        "etag": '"5d41402abc4b2a76b9719d911017c592"',
    },
)

REFLECTION_LIST_A_USER_PREFERENCE = OpenApiExample(
    "a user preference", value={"scope": "user", "user": "gene", "content": "Prefers short answers."}
)
