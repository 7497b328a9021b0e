"""save_memory: remember a fact for future conversations, as the agent's trust rules let the assistant (agent-wide
memory held for review or kept per user where the agent says so)."""

from __future__ import annotations

from django.conf import settings
from django.utils.functional import lazy
from rest_framework import serializers

from agents.models import AgentMemoryFromUsers
from conversations.services.ingestion import end_user_get_or_create
from core.api.fields import StrictCharField, StrictDurationField, StrictRegexField
from core.exceptions import ApplicationError
from facts.models import FactScope, FactWriter
from facts.services.curation import fact_expiry_resolve, fact_get_or_create
from formation.models import HeldMemory
from formation.services.memory_trust import HeldCandidate, held_memory_store_one
from formation.tools.base import Tool, ToolContext, ToolError, arguments_validate
from formation.tools.guards import TOOL_ORIGIN, content_screened, content_trusted, memory_shown


def _content_help() -> str:
    return (
        f"One self-contained, objective statement of at most {settings.FACT_MAX_WORDS} words, naming who it is about "
        '("Gene\'s birthday is March 15th", not "it is on the 15th").'
    )


# A memory's content, save_memory's and update_memory's: its description quotes the word limit when it is read.
CONTENT_HELP = lazy(_content_help, str)()


class SaveMemoryArguments(serializers.Serializer):
    content = StrictCharField(max_length=settings.FACT_MAX_CHARS, help_text=CONTENT_HELP)
    scope = serializers.ChoiceField(
        choices=[FactScope.USER, FactScope.AGENT],
        default=FactScope.USER,
        help_text="'user': about or for this user only (default). 'agent': true for every user.",
    )
    tags = serializers.ListField(
        child=StrictCharField(max_length=100), max_length=20, default=list, help_text="Optional labels."
    )
    key = StrictRegexField(
        r"^[a-z][a-z0-9_]{0,99}$",
        required=False,
        default="",
        help_text="For a stable attribute of the user with one current value, its profile key in snake_case "
        "(home_city, employer, preferred_language): replaces the previous value.",
    )
    expires_in = StrictDurationField(
        required=False,
        help_text='For something true only for a while ("my hotel room this week"): how long to remember it, as ISO '
        '8601 ("P7D", "PT12H") or "7 days". Forgotten after that.',
    )
    expires_at = serializers.DateTimeField(
        required=False, help_text="Or the time it stops being worth remembering (ISO 8601, in the future)."
    )


def save_memory(context: ToolContext, arguments: dict) -> dict:
    options = arguments_validate(SaveMemoryArguments, arguments)
    try:
        expires_at = fact_expiry_resolve(expires_at=options.get("expires_at"), expires_in=options.get("expires_in"))
    except ApplicationError as error:
        raise ToolError(error.message, fields=error.fields) from error
    options["content"] = content_trusted(context, content_screened(context, options["content"]))
    policy = context.agent.agent_memory_from_users
    if options["scope"] == FactScope.AGENT and policy == AgentMemoryFromUsers.REVIEW:
        held = held_memory_store_one(
            agent=context.agent,
            user=context.user,
            session=context.session,
            candidate=HeldCandidate(
                kind=HeldMemory.Kind.FACT,
                content=options["content"],
                reason=HeldMemory.Reason.AGENT_SCOPE_FROM_USER,
                detail="saved by the assistant with scope 'agent' (agent_memory_from_users = review)",
            ),
            origin=TOOL_ORIGIN,
        )
        return {
            "saved": False,
            "held_for_review": True,
            "review_id": held.pk,
            "note": "memory shared by every user is stored once an operator approves it.",
        }
    if options["scope"] == FactScope.AGENT and policy == AgentMemoryFromUsers.USER_SCOPE:
        if not context.user_external_id:
            raise ToolError(
                "this assistant keeps memory from conversations per user, and this one has no user.",
                fields={"scope": ["this conversation has no user"]},
            )
        options["scope"] = FactScope.USER
    user = None
    if options["scope"] == FactScope.USER:
        if not context.user_external_id:
            raise ToolError(
                "this conversation has no user: save with scope 'agent', or not at all.",
                fields={"scope": ["this conversation has no user"]},
            )
        user = context.user or end_user_get_or_create(agent=context.agent, external_id=context.user_external_id)
    fact, created = fact_get_or_create(
        agent=context.agent,
        user=user,
        scopes=[options["scope"]],
        content=options["content"],
        tags=options["tags"],
        source_session=context.session,
        change_reason="saved by the assistant",
        key=options["key"],
        written_by=FactWriter.ASSISTANT,
        expires_at=expires_at,
    )
    return {"saved": created, "already_known": not created, "memory": memory_shown(fact)}


TOOL = Tool(
    name="save_memory",
    description="Remember a fact for future conversations. Save only durable facts worth recalling later, one per "
    "call.",
    arguments=SaveMemoryArguments,
    run=save_memory,
)
