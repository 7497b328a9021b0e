"""get_profile: what memory holds of this user (or, without one, of every user of the assistant) by category, each
entry with when it held and the memories that say it (facts.selectors.profile), while the agent's RAG is on."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core.api.fields import StrictCharField
from facts.selectors.profile import CategoryEntry, CategoryUnknown, profile_sections, user_profile
from formation.tools.base import Tool, ToolContext, ToolError, arguments_validate
from formation.tools.guards import world_time_shown

# What one answer shows at most: a profile at a glance stays a few hundred tokens.
PROFILE_TOOL_MAX_ENTRIES = 20
PROFILE_TOOL_MAX_MEMORIES = 3
PROFILE_TOOL_MAX_CATEGORIES = 20


class GetProfileArguments(serializers.Serializer):
    category = serializers.ListField(
        child=StrictCharField(max_length=50),
        required=False,
        max_length=PROFILE_TOOL_MAX_CATEGORIES,
        help_text="Only these categories (activities, likes, relationships, work, places, ...); all when left out.",
    )
    include_history = serializers.BooleanField(
        default=False, help_text="Also what no longer holds (a job left, a home moved from), default false."
    )

    def validate_include_history(self, value: object) -> bool:
        # Strict like the other arguments: a model's "yes" or 1 is a mistake to report back, not a guess to make.
        if not isinstance(self.initial_data.get("include_history", False), bool):
            raise serializers.ValidationError("must be true or false.")
        return bool(value)


def _entry(entry: CategoryEntry) -> dict[str, Any]:
    shown = {"value": entry.value, "mentions": entry.mentions}
    if entry.last_mentioned is not None:
        shown["last_mentioned"] = entry.last_mentioned.date().isoformat()
    return (
        shown
        | world_time_shown(entry.world_time)
        | {"memories": [{"id": fact.pk, "content": fact.content} for fact in entry.facts[:PROFILE_TOOL_MAX_MEMORIES]]}
    )


def get_profile(context: ToolContext, arguments: dict) -> dict:
    options = arguments_validate(GetProfileArguments, arguments)
    try:
        profile = profile_sections(
            agent=context.agent,
            user=context.user,
            categories=options.get("category"),
            include_history=options["include_history"],
        )
    except CategoryUnknown as unknown:
        raise ToolError(
            f"invalid arguments: category: {unknown.slug!r} is not a category; the categories are "
            f"{', '.join(unknown.known)}.",
            fields={"category": [f"not one of: {', '.join(unknown.known)}"]},
        ) from None
    categories = []
    for section in profile.sections:
        shown: dict[str, Any] = {
            "category": section.category,
            "name": section.name,
            "entries": [_entry(entry) for entry in section.entries[:PROFILE_TOOL_MAX_ENTRIES]],
        }
        if options["include_history"]:
            shown["history"] = [_entry(entry) for entry in section.history[:PROFILE_TOOL_MAX_ENTRIES]]
        categories.append(shown)
    answer: dict[str, Any] = {"categories": categories}
    if context.user is not None:
        answer["attributes"] = {
            key: entry.value for key, entry in user_profile(agent=context.agent, user=context.user).items()
        }
    return answer


TOOL = Tool(
    name="get_profile",
    description="What memory holds of this user at a glance, by category (identity, relationships, work, places, "
    "activities, likes, dislikes, health, possessions, plans, events, beliefs): each entry once, with how often it "
    "was mentioned, when it held (held_from, held_until, holds_now) and the memories that say it. Use it for 'what do "
    "you know about me', and for a question that asks for a list ('what are my hobbies', 'which places have I "
    "visited') with `category`.",
    arguments=GetProfileArguments,
    run=get_profile,
    reads_memory=True,
)
