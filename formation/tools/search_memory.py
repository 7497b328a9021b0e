"""search_memory: the facts that best answer a query, as fact search ranks them (while the agent's RAG is on)."""

from __future__ import annotations

from rest_framework import serializers

from core.api.fields import HoldsAtField, StrictCharField, StrictIntegerField
from facts.selectors.search import facts_search
from formation.tools.base import Tool, ToolContext, arguments_validate
from formation.tools.guards import memory_shown

TOOL_SEARCH_TOP_K_MAX = 20


class SearchMemoryArguments(serializers.Serializer):
    query = StrictCharField(max_length=2000, help_text="What to look for, as a question or keywords.")
    top_k = StrictIntegerField(
        min_value=1,
        max_value=TOOL_SEARCH_TOP_K_MAX,
        default=5,
        help_text="How many memories to return (default 5).",
    )
    holds_at = HoldsAtField(
        required=False,
        help_text="Only what held in the world on this day (YYYY-MM-DD), for a question about a past time ('where "
        "did they live in 2021?'); leave it out otherwise.",
    )


def search_memory(context: ToolContext, arguments: dict) -> dict:
    options = arguments_validate(SearchMemoryArguments, arguments)
    hits = facts_search(
        agent=context.agent,
        user=context.user,
        query=options["query"],
        top_k=options["top_k"],
        holds_at=options.get("holds_at"),
    )
    return {"memories": [memory_shown(hit.fact) | {"score": round(hit.score, 3)} for hit in hits]}


TOOL = Tool(
    name="search_memory",
    description="Search long-term memory for facts from earlier conversations (about this user, or known to you in "
    "general). Use it when an answer may depend on something you were told before.",
    arguments=SearchMemoryArguments,
    run=search_memory,
    reads_memory=True,
)
