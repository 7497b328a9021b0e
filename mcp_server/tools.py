"""The memory tools of the MCP server, one registry for both transports: their MCP definitions (JSON Schema,
descriptions, annotations) and their execution for one caller.

The memory tools of /api/v1/tools (search_memory, get_entity, get_profile, save_memory, update_memory, delete_memory,
rate_memory) are taken from formation.tools as they are: same definitions, same execution (tool_call_execute), so the
poisoning and sensitive-data rules are the ones the REST tools follow. Four read tools are added here, where
conversations, facts and reflections may all be reached: search_conversations, get_memory_context, get_memory_bundle and
get_timeline, through the same selectors as their REST endpoints and with the same input limits. Every tool's
arguments, theirs and the `user` and `session` of an unpinned connection, are declared once as a serializer: it
validates a call, and its JSON Schema is what the model is shown (core.api.tool_schema). Every error names its
argument in `fields`.

Which end user (and session) a call is about: pinned by the caller (the X-Memory-User / X-Memory-Session headers, or
the stdio server's MEMORY_USER), or else the `user` / `session` argument of each call. A pinned connection's tools do
not offer those arguments, and a call naming another user than the pinned one is refused: the model on the other end
must not be able to read another user's memory because a conversation told it to."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rest_framework import serializers

from agents.models import Agent
from api.conversations.serializers import EXTERNAL_ID_MAX_LENGTH
from conversations.selectors.memory_scope import MemoryScopeTarget, memory_scope_resolve
from conversations.selectors.message_search import messages_search
from core.api.fields import StrictCharField, StrictIntegerField
from core.api.json_limits import json_unstorable_fields
from core.api.tool_schema import serializer_json_schema
from core.exceptions import ApplicationError
from facts.selectors.graph import entity_find
from facts.selectors.graph_search import messages_graph_ranking
from facts.selectors.list_questions import messages_list_ranking
from facts.selectors.timeline import (
    TimelineEntry,
    timeline_position_parse,
    timeline_read,
    timeline_scope_of_entity,
    timeline_scope_of_user,
)
from formation.tools.base import ToolContext, ToolError, arguments_validate
from formation.tools.guards import world_time_shown
from formation.tools.registry import tool_call_execute, tool_definitions
from mcp_server.metrics import mcp_tool_call_count
from reflections.selectors.bundle import BundleLimits, memory_bundle_build
from reflections.selectors.context import memory_context_get

USER_HEADER = "X-Memory-User"
SESSION_HEADER = "X-Memory-Session"
CONVERSATION_SEARCH_TOP_K_MAX = 20
TIMELINE_TOOL_LIMIT_MAX = 50


@dataclass(frozen=True)
class Caller:
    """Who calls: the agent of the API key, and the end user and session the connection is pinned to, if any."""

    agent: Agent
    user: str | None = None
    session: str | None = None
    request_id: str | None = None  # the HTTP request's X-Request-ID, for the log lines of its tool calls

    @property
    def pinned(self) -> bool:
        return bool(self.user or self.session)


def pinned_id(*, header: str, value: str | None) -> str | None:
    """The end user or session id a header pins a connection to; MemoryToolError naming the header if it is not one."""
    if value is None:
        return None
    if not value.strip() or len(value) > EXTERNAL_ID_MAX_LENGTH:
        raise MemoryToolError(
            f"The {header} header must be an id of 1 to {EXTERNAL_ID_MAX_LENGTH} characters.",
            fields={header: ["not a valid id"]},
        )
    return value


class MemoryToolError(Exception):
    """What the model got wrong, with the argument it concerns."""

    def __init__(self, message: str, *, fields: dict[str, list[str]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields or {}


@dataclass(frozen=True)
class MemoryToolOutcome:
    ok: bool
    result: dict[str, Any] | None = None
    error: str | None = None
    fields: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Hints:
    """MCP tool annotations: what a client may assume before calling (e.g. ask before a destructive call)."""

    read_only: bool
    destructive: bool
    idempotent: bool

    def annotations(self, title: str) -> dict[str, Any]:
        return {
            "title": title,
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": False,
        }


READ = Hints(read_only=True, destructive=False, idempotent=True)
# The memory tools of formation.tools. Saving the same statement twice finds it known; updating closes the old
# version (kept as history) and deleting closes the fact, so both change what memory says: destructive for a client.
FACT_TOOL_HINTS = {
    "search_memory": READ,
    "get_entity": READ,
    "get_profile": READ,
    "save_memory": Hints(read_only=False, destructive=False, idempotent=True),
    "update_memory": Hints(read_only=False, destructive=True, idempotent=False),
    "delete_memory": Hints(read_only=False, destructive=True, idempotent=True),
    # Feedback is recorded each time; a user's own fact called wrong or outdated is closed (kept as history).
    "rate_memory": Hints(read_only=False, destructive=True, idempotent=False),
}
FACT_TOOL_TITLES = {
    "search_memory": "Search memory",
    "get_entity": "What memory knows about someone or something",
    "get_profile": "What memory holds of this user, by category",
    "save_memory": "Save a memory",
    "update_memory": "Correct a memory",
    "delete_memory": "Forget a memory",
    "rate_memory": "Say a memory is wrong, outdated, harmful or useful",
}
UNKNOWN_TOOL_HINTS = Hints(read_only=False, destructive=True, idempotent=False)


class _ScopeArguments(serializers.Serializer):
    """Which end user and session a call of an unpinned connection is about (null: none)."""

    user = StrictCharField(
        max_length=EXTERNAL_ID_MAX_LENGTH,
        required=False,
        allow_null=True,
        help_text="The end user this is about (their id in your application). Leave out for memory shared by every "
        "user of this assistant.",
    )
    session = StrictCharField(
        max_length=EXTERNAL_ID_MAX_LENGTH,
        required=False,
        allow_null=True,
        help_text="The conversation (session id) this happens in, if any; it implies its user.",
    )


SCOPE_PROPERTIES = serializer_json_schema(_ScopeArguments)["properties"]


@dataclass(frozen=True)
class _ReadTool:
    name: str
    title: str
    description: str
    arguments: type[serializers.Serializer]
    run: Callable[[Agent, MemoryScopeTarget, dict], dict]
    needs_user: bool = False
    needs_user_unless: str = ""  # an argument that makes the user optional (get_timeline's `entity`)
    user_required: str = "past conversations belong to one user"
    user_field_error: str = "required: whose conversations to search"


def _definition(
    *, name: str, title: str, description: str, parameters: dict, hints: Hints, caller: Caller
) -> dict[str, Any]:
    properties = dict(parameters.get("properties", {}))
    if not caller.pinned:
        properties |= SCOPE_PROPERTIES
    return {
        "name": name,
        "title": title,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": properties,
            "required": list(parameters.get("required", [])),
            "additionalProperties": False,
        },
        "annotations": hints.annotations(title),
    }


# --- the read tools ---------------------------------------------------------------------------------------------------


class _ConversationSearchArguments(serializers.Serializer):
    query = StrictCharField(max_length=2000, help_text="What to look for, as a question or keywords.")
    top_k = StrictIntegerField(
        min_value=1,
        max_value=CONVERSATION_SEARCH_TOP_K_MAX,
        default=5,
        help_text="How many turns to return (default 5).",
    )


class _BundleArguments(serializers.Serializer):
    query = StrictCharField(max_length=20000, help_text="The user's request memory is gathered for.")
    token_budget = StrictIntegerField(
        min_value=1, max_value=200_000, default=2000, help_text="At most this many tokens of memory (default 2000)."
    )
    facts_top_k = StrictIntegerField(
        min_value=0, max_value=CONVERSATION_SEARCH_TOP_K_MAX, default=10, help_text="Facts (default 10)."
    )
    recent_turns = StrictIntegerField(min_value=0, max_value=200, default=10, help_text="Recent turns (10).")
    similar_messages_top_k = StrictIntegerField(
        min_value=0, max_value=50, default=5, help_text="Similar past turns (default 5)."
    )


class _NoArguments(serializers.Serializer):
    pass


class _TimelineArguments(serializers.Serializer):
    entity = StrictCharField(
        max_length=200,
        required=False,
        help_text="A person, place, organisation or thing by any of its names ('me' is the user); leave out for "
        "everything about the user.",
    )
    time_from = serializers.DateField(required=False, help_text="Only what happened on or after this day (YYYY-MM-DD).")
    time_to = serializers.DateField(required=False, help_text="Only what happened on or before this day (YYYY-MM-DD).")
    limit = StrictIntegerField(
        min_value=1, max_value=TIMELINE_TOOL_LIMIT_MAX, default=20, help_text="How many entries (default 20)."
    )
    cursor = StrictCharField(
        max_length=200, required=False, help_text="The next_cursor of a previous call: the entries after it."
    )

    def validate_cursor(self, value: str) -> object:
        try:
            return timeline_position_parse(value)
        except ValueError as error:
            raise serializers.ValidationError("not a cursor of get_timeline: pass next_cursor as it came.") from error

    def validate(self, data: dict) -> dict:
        if "time_from" in data and "time_to" in data and data["time_to"] < data["time_from"]:
            raise serializers.ValidationError({"time_to": ["is before time_from."]})
        return data


def _validated(serializer_class: type[serializers.Serializer], arguments: dict) -> dict:
    """The arguments as the tools of formation.tools validate theirs: each problem named by its path."""
    try:
        return arguments_validate(serializer_class, arguments)
    except ToolError as error:
        raise MemoryToolError(str(error), fields=error.fields) from error


def _search_conversations(agent: Agent, target: MemoryScopeTarget, arguments: dict) -> dict:
    options = _validated(_ConversationSearchArguments, arguments)
    hits = messages_search(
        agent=agent,
        user=target.user,
        session=target.session,
        graph_ranking=messages_graph_ranking,
        list_ranking=messages_list_ranking,
        **options,
    )
    return {
        "messages": [
            {
                "session": hit.session_external_id,
                "role": hit.message.role,
                "content": hit.message.content,
                "said_at": hit.message.created_at.isoformat(),
                "score": round(hit.score, 3),
            }
            for hit in hits
        ]
    }


def _memory_context(agent: Agent, target: MemoryScopeTarget, arguments: dict) -> dict:
    _validated(_NoArguments, arguments)
    context = memory_context_get(agent=agent, user=target.user, session=target.session)
    if not context.enabled:
        raise MemoryToolError(
            "always-in-context memory is switched off for this assistant; answer without it.",
            fields={"name": ["switched off for this assistant"]},
        )
    return {"text": context.text, "token_count": context.token_count}


def _memory_bundle(agent: Agent, target: MemoryScopeTarget, arguments: dict) -> dict:
    options = _validated(_BundleArguments, arguments)
    bundle = memory_bundle_build(
        agent=agent,
        user=target.user,
        session=target.session,
        query=options["query"],
        token_budget=options["token_budget"],
        limits=BundleLimits(
            facts_top_k=options["facts_top_k"],
            similar_messages_top_k=options["similar_messages_top_k"],
            recent_turns=options["recent_turns"],
        ),
    )
    return {
        "text": bundle.text,
        "tokens_used": bundle.tokens_used,
        "token_budget": bundle.token_budget,
        "parts": {name: {"status": part.status, "tokens": part.tokens} for name, part in bundle.parts.items()},
    }


def _timeline_entry(entry: TimelineEntry) -> dict[str, Any]:
    return {
        "happened": entry.happened.value,
        "at": entry.at.isoformat(),
        "placed_by": entry.placed_by.value,
        "memory_id": entry.fact.pk,
        "version": entry.fact.version,
        "content": entry.fact.content,
        **world_time_shown(entry.fact.world_time),
        "recorded_at": entry.recorded_at.isoformat(),
        "reason": entry.reason,
        "said_in": [
            {"message": message.pk, "session": message.session.external_id, "said_at": message.created_at.isoformat()}
            for message in entry.messages
        ],
    }


def _timeline(agent: Agent, target: MemoryScopeTarget, arguments: dict) -> dict:
    if not agent.rag_enabled:
        raise MemoryToolError(
            "memory search is switched off for this assistant; answer without it.",
            fields={"name": ["switched off for this assistant"]},
        )
    options = _validated(_TimelineArguments, arguments)
    answer: dict[str, Any] = {}
    if "entity" in options:
        found = entity_find(agent=agent, user=target.user, name=options["entity"], limit=1)
        if not found:
            return {"found": False, "note": "memory knows no one and nothing by that name; try search_memory."}
        scope = timeline_scope_of_entity(entity=found[0], conversation=True, seen_by=target.user)
        answer = {"found": True, "entity": found[0].name}
    elif target.user is None:
        return {"entries": [], "next_cursor": None}  # a user memory has never seen has no history
    else:
        scope = timeline_scope_of_user(agent=agent, user=target.user)
    page = timeline_read(
        scope=scope,
        time_from=options.get("time_from"),
        time_to=options.get("time_to"),
        after=options.get("cursor"),
        limit=options["limit"],
    )
    return answer | {
        "entries": [_timeline_entry(entry) for entry in page.entries],
        "next_cursor": page.next_after.token() if page.next_after is not None else None,
    }


READ_TOOLS = (
    _ReadTool(
        name="search_conversations",
        title="Search past conversations",
        description="Search what was said in earlier conversations with this user (their own words and your "
        "replies), when you need the exact turn rather than a remembered fact: 'what did I say about ...', 'when did "
        "we talk about ...'. Secrets said in a conversation are withheld or redacted in what this returns.",
        arguments=_ConversationSearchArguments,
        run=_search_conversations,
        needs_user=True,
    ),
    _ReadTool(
        name="get_memory_context",
        title="Get the memory context block",
        description="What you know about this assistant's users in general, this user and this conversation, as one "
        "short block to keep in mind for the whole conversation. Call it once at the start of a conversation.",
        arguments=_NoArguments,
        run=_memory_context,
    ),
    _ReadTool(
        name="get_memory_bundle",
        title="Get the memory bundle for a prompt",
        description="Everything memory has for one request, cut to a token budget: the context block, the "
        "conversation's recent turns, the facts that match the request and similar past turns, as one text to read "
        "before answering.",
        arguments=_BundleArguments,
        run=_memory_bundle,
    ),
    _ReadTool(
        name="get_timeline",
        title="What changed, in the order it happened",
        description="What changed about this user (or, with `entity`, about someone or something by name), in the "
        "order it happened in the world: each entry a memory that started, ended or was corrected, with when it "
        "held (held_from, held_until, holds_now), when memory recorded it and the conversation it was said in. Use "
        "it for 'what has changed since ...', 'where did I live before ...', 'how did my job change'.",
        arguments=_TimelineArguments,
        run=_timeline,
        needs_user=True,
        needs_user_unless="entity",
        user_required="a timeline is about one user, or about an entity",
        user_field_error="required: whose timeline (or give `entity`)",
    ),
)
READ_TOOLS_BY_NAME = {tool.name: tool for tool in READ_TOOLS}
TOOL_NAMES = frozenset(FACT_TOOL_HINTS) | frozenset(READ_TOOLS_BY_NAME)


# --- the registry -----------------------------------------------------------------------------------------------------


def memory_tool_definitions(*, caller: Caller) -> list[dict[str, Any]]:
    """Every tool this caller may use, as MCP `Tool` objects (plain dicts): the memory tools of /api/v1/tools for
    this agent (search_memory only while its RAG is on), then the read tools."""
    definitions = []
    for openai_tool in tool_definitions(agent=caller.agent):
        function = openai_tool["function"]
        definitions.append(
            _definition(
                name=function["name"],
                title=FACT_TOOL_TITLES.get(function["name"], function["name"]),
                description=function["description"],
                parameters=function["parameters"],
                hints=FACT_TOOL_HINTS.get(function["name"], UNKNOWN_TOOL_HINTS),
                caller=caller,
            )
        )
    for tool in READ_TOOLS:
        definitions.append(
            _definition(
                name=tool.name,
                title=tool.title,
                description=tool.description,
                parameters=serializer_json_schema(tool.arguments),
                hints=READ,
                caller=caller,
            )
        )
    return definitions


def _scope_argument(arguments: dict, name: str, pinned: str | None) -> str | None:
    if name not in arguments:
        return pinned
    value = _validated(_ScopeArguments, {name: arguments.pop(name)})[name]
    if value is None:
        return pinned
    if pinned is not None and value != pinned:
        raise MemoryToolError(
            f"invalid arguments: {name}: this connection is for {name} {pinned!r}; leave `{name}` out.",
            fields={name: [f"this connection is for {name} {pinned!r}"]},
        )
    return value


def _call(*, caller: Caller, name: str, arguments: dict) -> dict:
    if problems := json_unstorable_fields(arguments):
        named = {
            f"arguments.{path}" if path != "non_field_errors" else "arguments": errors
            for path, errors in problems.items()
        }
        raise MemoryToolError(
            "invalid arguments: " + "; ".join(f"{path}: {' '.join(errors)}" for path, errors in named.items()),
            fields=named,
        )
    arguments = dict(arguments)
    user = _scope_argument(arguments, "user", caller.user)
    session = _scope_argument(arguments, "session", caller.session)
    target = memory_scope_resolve(agent=caller.agent, user_external_id=user, session_external_id=session)
    read_tool = READ_TOOLS_BY_NAME.get(name)
    if read_tool is not None:
        user_optional = bool(read_tool.needs_user_unless and arguments.get(read_tool.needs_user_unless))
        if read_tool.needs_user and not (user or session) and not user_optional:
            raise MemoryToolError(
                f"invalid arguments: user: {read_tool.user_required}; give `user` (or `session`).",
                fields={"user": [read_tool.user_field_error]},
            )
        return read_tool.run(caller.agent, target, arguments)
    context = ToolContext(
        agent=caller.agent,
        user=target.user,
        user_external_id=target.user.external_id if target.user else user,
        session=target.session,
    )
    outcome = tool_call_execute(context=context, name=name, arguments=arguments)
    if not outcome.ok:
        raise MemoryToolError(outcome.error or "the tool call failed.", fields=outcome.fields)
    return outcome.result or {}


def memory_tool_call(*, caller: Caller, name: str, arguments: object) -> MemoryToolOutcome:
    """Run one tool call. What the model got wrong (an unknown tool, a wrong or missing argument, an id it cannot
    see, a secret it tried to save) is an outcome with ok=False naming what to fix, never an exception. Counted in
    the tool-call metrics, by outcome, whichever transport carried it."""
    started, outcome = time.perf_counter(), None
    try:
        outcome = _memory_tool_call(caller=caller, name=name, arguments=arguments)
        return outcome
    finally:
        mcp_tool_call_count(
            tool=name if isinstance(name, str) else "",
            known_tools=TOOL_NAMES,
            outcome="failed" if outcome is None else "ok" if outcome.ok else "tool_error",
            seconds=time.perf_counter() - started,
        )


def _memory_tool_call(*, caller: Caller, name: str, arguments: object) -> MemoryToolOutcome:
    known = {definition["name"] for definition in memory_tool_definitions(caller=caller)}
    if name not in known:
        return MemoryToolOutcome(
            ok=False,
            error=f"unknown tool {name!r}; the tools are {', '.join(sorted(known))}.",
            fields={"name": ["unknown tool"]},
        )
    if not isinstance(arguments, dict):
        return MemoryToolOutcome(
            ok=False,
            error="invalid arguments: arguments: must be a JSON object of named parameters.",
            fields={"arguments": ["not an object"]},
        )
    try:
        return MemoryToolOutcome(ok=True, result=_call(caller=caller, name=name, arguments=arguments))
    except MemoryToolError as error:
        return MemoryToolOutcome(ok=False, error=error.message, fields=error.fields)
    except ApplicationError as error:
        return MemoryToolOutcome(ok=False, error=error.message, fields=error.fields)


# --- the context resource ---------------------------------------------------------------------------------------------

CONTEXT_RESOURCE_URI = "memory://context"
USER_CONTEXT_TEMPLATE = "memory://users/{user}/context"


def memory_context_resource_text(*, caller: Caller, user: str | None) -> str:
    """The always-in-context block of a user (the pinned one for memory://context, or the agent's alone when the
    connection names none), for a resource read. Raises MemoryToolError naming `user` when it may not be read."""
    outcome = memory_tool_call(
        caller=caller, name="get_memory_context", arguments={"user": user} if user is not None else {}
    )
    if not outcome.ok:
        raise MemoryToolError(outcome.error or "", fields=outcome.fields)
    return (outcome.result or {}).get("text", "")


# --- the profile resource ---------------------------------------------------------------------------------------------

PROFILE_RESOURCE_URI = "memory://profile"
USER_PROFILE_TEMPLATE = "memory://users/{user}/profile"


def memory_profile_resource_text(*, caller: Caller, user: str | None) -> str:
    """What get_profile answers for a user (the pinned one for memory://profile, or agent-wide when the connection
    names none), as JSON, for a resource read. Raises MemoryToolError naming `user` when it may not be read."""
    outcome = memory_tool_call(caller=caller, name="get_profile", arguments={"user": user} if user is not None else {})
    if not outcome.ok:
        raise MemoryToolError(outcome.error or "", fields=outcome.fields)
    return json.dumps(outcome.result or {}, ensure_ascii=False)
